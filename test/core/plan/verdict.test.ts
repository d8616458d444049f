// What a writer's or the API server's answer makes of a decision: one function, every outcome.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { planStep } from "../../../core/plan/plan.js";
import { verdict } from "../../../core/plan/verdict.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");

const growing = (): { s: Snapshot; d: Decision } => {
  const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
  const s = snapshot(set, claimsFor(set));
  return { s, d: planStep(s, NOW, DIRECT) };
};

describe("verdict", () => {
  it("applied: the decision stands as planned", () => {
    const { s, d } = growing();
    expect(verdict(s, NOW, d, { kind: "applied" })).toBe(d);
  });

  it("proposed: Waiting/AwaitingApproval with the writer's words; the action and the plan's events stay", () => {
    const { s, d } = growing();
    const v = verdict(s, NOW, d, {
      kind: "proposed",
      detail: "opened pull request #3; merge it to continue",
      url: "https://example.test/pr/3",
    });
    expect(v).toMatchObject({
      phase: "Waiting",
      reason: "AwaitingApproval",
      message: "opened pull request #3; merge it to continue",
      action: d.action,
      events: d.events,
      requeueAfter: 60,
    });
    expect(JSON.parse(v.setAnnotations![Keys.status]!)).toMatchObject({
      phase: "Waiting",
      reason: "AwaitingApproval",
      ordinal: 2,
    });
  });

  it("refused by the writer: Blocked with its reason, a Warning event, no action", () => {
    const { s, d } = growing();
    const v = verdict(s, NOW, d, {
      kind: "refused",
      reason: "ChangeRejected",
      message: "pull request #3 was closed without merging",
    });
    expect(v).toMatchObject({ phase: "Blocked", reason: "ChangeRejected", revision: d.revision });
    expect(v.action).toBeUndefined();
    expect(v.requeueAfter).toBeUndefined();
    expect(v.events).toEqual([
      {
        type: "Warning",
        reason: "ChangeRejected",
        action: "Block",
        note: "pull request #3 was closed without merging",
      },
    ]);
  });

  it.each([
    [
      403,
      "Forbidden",
      'persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi',
      "QuotaExceeded",
      /Raise the ResourceQuota/,
    ],
    [
      403,
      "Forbidden",
      "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
      "ExpansionNotAllowed",
      /allowVolumeExpansion: true/,
    ],
    [
      422,
      "Invalid",
      "spec.resources.requests.storage: Forbidden: field can not be less than previous value",
      "ApplyRejected",
      /Fix the desired templates/,
    ],
  ])(
    "rejected by the server (%i %s): Blocked/%s with the server's words and the fix",
    (code, reason, message, expected, fix) => {
      const { s, d } = growing();
      const v = verdict(s, NOW, d, { kind: "rejected", refusal: { code, reason, message } });
      expect(v).toMatchObject({ phase: "Blocked", reason: expected });
      expect(v.message).toContain(
        `the API server refused PatchClaim of default/data-web-2 (${code} ${reason}): ${message}`,
      );
      expect(v.message).toMatch(fix);
      expect(v.events).toEqual([expect.objectContaining({ type: "Warning", reason: expected })]);
    },
  );

  it("transient: nothing is recorded, and the next step comes after the server's Retry-After (else 5 s)", () => {
    const { s, d } = growing();
    const v = verdict(s, NOW, d, { kind: "transient", retryAfterSeconds: 3 });
    expect(v).toMatchObject({ phase: d.phase, reason: d.reason, events: [], requeueAfter: 3 });
    expect(v.setAnnotations).toBeUndefined();
    expect(verdict(s, NOW, d, { kind: "transient" }).requeueAfter).toBe(5);
  });
});
