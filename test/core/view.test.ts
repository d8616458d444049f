// The view model every interface shows a set through (core/view.ts): the summary `status` and
// `/ui` print, the headline `status --watch` and the set's page print, the per-ordinal rows (with
// pods once coordinated), the next step for any action, the templates and the events.
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { planStep } from "../../core/plan.js";
import { renderTable } from "../../core/render.js";
import type { Action, OrdinalReport } from "../../core/types.js";
import {
  actionText,
  headlineOf,
  linkIn,
  ordinalRows,
  podsCoordinated,
  recentEvents,
  setPage,
  summarize,
  templatesView,
} from "../../core/view.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "./builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const grown = () => makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "2Gi" }] });
const withStatus = (set: ReturnType<typeof makeSet>, status: object, extra: Record<string, string> = {}) => {
  set.metadata.annotations = { ...set.metadata.annotations, [Keys.status]: JSON.stringify(status), ...extra };
  return set;
};

describe("summarize and headlineOf", () => {
  it("an opted-in set never stepped: '-' and NotObserved", () => {
    const s = summarize(grown());
    expect(s).toMatchObject({
      optedIn: true,
      phase: "-",
      reason: "-",
      message: "no step yet",
      updated: "-",
      revision: "-",
      applyMode: { mode: "direct" },
    });
    expect(headlineOf(s)).toMatchObject({ phase: "-", reason: "NotObserved" });
    expect(headlineOf(s).end).toBeUndefined();
  });

  it("a recorded status of the desired revision: its fields, progress, and how a watch ends", () => {
    const set = grown();
    const revision = summarize(set).desiredRevision!;
    const counts = { updated: 1, inFlight: 1, pending: 1, blocked: 0, total: 3 };
    const s = summarize(
      withStatus(set, {
        phase: "Blocked",
        reason: "QuotaExceeded",
        message: "over quota",
        revision,
        counts,
        since: "t1",
        observedAt: "t2",
      }),
    );
    expect(s).toMatchObject({
      phase: "Blocked",
      reason: "QuotaExceeded",
      since: "t1",
      observedAt: "t2",
      progress: { done: 1, total: 3 },
      updated: "1/3",
    });
    expect(headlineOf(s)).toEqual({
      phase: "Blocked",
      reason: "QuotaExceeded",
      message: "over quota",
      updated: "1/3 updated",
      end: "blocked",
    });
  });

  it("a status of an earlier revision says nothing of this one; a set not opted in is Idle", () => {
    const s = summarize(
      withStatus(grown(), {
        phase: "Complete",
        reason: "RolloutComplete",
        message: "done",
        revision: "old",
        counts: { updated: 3, total: 3 },
      }),
    );
    expect(headlineOf(s).reason).toBe("NotObserved");
    const off = makeSet();
    off.metadata.annotations = {};
    expect(headlineOf(summarize(off))).toMatchObject({ phase: "Idle", reason: "NotOptedIn", end: "blocked" });
  });

  it("pull-request mode links the pull request the writer recorded (status.pullRequest), never a URL of the message; http(s) only", () => {
    // issue 24, item 7: the link was the last URL of the message, which a driver's or admission error text chooses.
    const set = withStatus(
      grown(),
      {
        phase: "Waiting",
        reason: "AwaitingApproval",
        message: "opened pull request #7; merge it — https://git.example/o/r/pull/7 (see https://evil.example/x)",
        pullRequest: "https://git.example/o/r/pull/7",
      },
      { [Keys.applyVia]: "pull-request" },
    );
    expect(summarize(set).applyMode).toEqual({ mode: "pull-request", link: "https://git.example/o/r/pull/7" });
    const unrecorded = withStatus(
      grown(),
      { phase: "Blocked", reason: "ApplyRejected", message: "admission webhook denied it: see https://evil.example/x" },
      { [Keys.applyVia]: "pull-request" },
    );
    expect(summarize(unrecorded).applyMode).toEqual({ mode: "pull-request" });
    const scheme = withStatus(
      grown(),
      { phase: "Waiting", reason: "AwaitingApproval", message: "m", pullRequest: "javascript:alert(1)" },
      { [Keys.applyVia]: "pull-request" },
    );
    expect(summarize(scheme).applyMode).toEqual({ mode: "pull-request" });
    expect(linkIn("see javascript:alert(1)")).toBeUndefined();
    expect(linkIn('x "https://a.example/p" y')).toBe("https://a.example/p");
    const bad = grown();
    bad.metadata.annotations![Keys.applyVia] = "carrier-pigeon";
    expect(summarize(bad).applyMode).toEqual({ mode: "invalid", value: "carrier-pigeon" });
  });

  it("a status annotation that is not a JSON object is no status", () => {
    const set = grown();
    set.metadata.annotations![Keys.status] = "[1,2]";
    expect(summarize(set).status).toBeNull();
  });
});

describe("the per-ordinal rows", () => {
  const report: OrdinalReport = {
    ordinal: 2,
    pod: "web-2",
    podPhase: "Running",
    podReady: false,
    podRevision: "web-abc",
    podUpdated: true,
    state: "InFlight",
    claims: [
      {
        template: "data",
        claim: "data-web-2",
        exists: true,
        spec: "2Gi",
        capacity: "1Gi",
        target: "2Gi",
        volumeAttributesClassName: { desired: "gold", current: "silver" },
        revision: "r1",
        readiness: { state: "Resizing", message: "data-web-2: the driver is resizing the volume" },
      },
    ],
  };

  it("cells shared by the text table and the page, pods with readiness and revision", () => {
    expect(ordinalRows([report])[0]).toMatchObject({
      pod: "web-2 (Running)",
      ready: "NotReady",
      revision: "web-abc (updated)",
      claims: [
        {
          spec: "2Gi",
          capacity: "1Gi",
          target: "2Gi",
          vac: "silver→gold",
          revision: "r1",
          readiness: "Resizing",
          readinessText: "Resizing: the driver is resizing the volume",
        },
      ],
    });
    const text = renderTable([report], true).split("\n");
    expect(text[0]).toMatch(/^ORDINAL\s+POD\s+POD-READY\s+POD-REVISION\s+STATE\s+CLAIM/);
    expect(text[1]).toMatch(/^2\s+web-2 \(Running\)\s+NotReady\s+web-abc \(updated\)\s+InFlight\s+data-web-2/);
    expect(renderTable([report])).not.toContain("POD-READY");
  });

  it("pods are shown once claimstep coordinates them", () => {
    const set = grown();
    expect(podsCoordinated(set)).toBe(false);
    set.metadata.annotations![Keys.podCoordination] = "ClaimsFirst";
    expect(podsCoordinated(set)).toBe(true);
  });
});

describe("the next step, templates and events", () => {
  it("one line for every kind of action", () => {
    const actions: Action[] = [
      {
        type: "PatchClaim",
        namespace: "db",
        claim: "data-web-2",
        template: "data",
        ordinal: 2,
        storage: "2Gi",
        labels: {},
        annotations: {},
      },
      { type: "PatchPartition", namespace: "db", set: "web", partition: 2, from: 3, userPartition: 0 },
      { type: "EvictPod", namespace: "db", pod: "web-2", uid: "u", ordinal: 2, claim: "data-web-2" },
    ];
    expect(actions.map(actionText)).toEqual([
      "PatchClaim db/data-web-2 storage=2Gi",
      "PatchPartition db/web partition 3 → 2 (recording the user's partition 0)",
      "EvictPod db/web-2 (ordinal 2: data-web-2 waits on its pod to finish resizing)",
    ]);
  });

  it("the set's page: the plan of the next step, desired vs live templates, events newest first", () => {
    const set = grown();
    const planned = planStep(snapshot(set, claimsFor(set)), NOW, DIRECT);
    const events = [
      { time: "2026-11-30T10:00:00.000000Z", type: "Normal", reason: "ClaimUpdated", note: "a", count: 1 },
      { time: "2026-11-30T10:05:00.000000Z", type: "Warning", reason: "QuotaExceeded", note: "b", count: 2 },
    ];
    const page = setPage(set, planned, events);
    expect(page.next).toMatchObject({
      phase: "Progressing",
      reason: "ClaimUpdated",
      action: "PatchClaim default/data-web-2 storage=2Gi",
    });
    expect(page.ordinals.map((o) => o.ordinal)).toEqual([2, 1, 0]);
    expect(page.events.map((e) => e.note)).toEqual(["b", "a"]);
    expect(page.templates.source).toBe("annotation");
    expect(page.templates.templates[0]!.fields.find((f) => f.field === "storage")).toEqual({
      field: "storage",
      live: "1Gi",
      desired: "2Gi",
      changed: true,
    });
    expect(setPage(set, planned, { error: "forbidden" })).toMatchObject({ events: [], eventsError: "forbidden" });
    expect(recentEvents(events, 1).map((e) => e.note)).toEqual(["b"]);
  });

  it("an invalid templates annotation is shown with its message", () => {
    const set = grown();
    set.metadata.annotations![Keys.templates] = "{not json";
    const t = templatesView(set);
    expect(t.source).toBe("invalid");
    expect(t.error).toMatch(/is not valid JSON/);
  });

  it("a template to add and one to remove show as such, the removed one's desired values '(removed)' (issue 27)", () => {
    const set = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "cache", storage: "1Gi" },
      ],
      desired: [
        { name: "data", storage: "1Gi" },
        { name: "logs", storage: "5Gi" },
      ],
      annotations: { [Keys.removeTemplates]: JSON.stringify(["cache"]) },
    });
    const t = templatesView(set);
    expect(t.templates.map((x) => [x.name, x.change])).toEqual([
      ["data", undefined],
      ["logs", "added"],
      ["cache", "removed"],
    ]);
    const logs = t.templates.find((x) => x.name === "logs")!;
    expect(logs.fields.find((f) => f.field === "storage")).toEqual({
      field: "storage",
      live: "-",
      desired: "5Gi",
      changed: true,
    });
    expect(t.templates.find((x) => x.name === "cache")!.fields.every((f) => f.desired === "(removed)")).toBe(true);
  });
});
