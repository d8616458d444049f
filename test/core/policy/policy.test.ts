// policyOf: the set's annotations parsed once, in rule order, so that one fault always wins.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { policyOf } from "../../../core/policy/policy.js";
import { makeSet, template } from "../builders.js";

const BAD = {
  [Keys.templates]: "not json",
  [Keys.applyVia]: "email",
  [Keys.podCoordination]: "Sometimes",
  [Keys.finalize]: "Always",
  [Keys.autogrow]: "{",
};
/** A set with every annotation from `from` on invalid (in BAD's order) and a bad maxUnavailable. */
const faultsFrom = (from: keyof typeof BAD, maxUnavailable = "lots") => {
  const keys = Object.keys(BAD) as (keyof typeof BAD)[];
  return makeSet({
    maxUnavailable,
    annotations: Object.fromEntries(keys.slice(keys.indexOf(from)).map((k) => [k, BAD[k]])),
  });
};

describe("policyOf", () => {
  it("reads every annotation of a valid set into one typed value", () => {
    const desired = [{ name: "data", storage: "2Gi" }];
    const set = makeSet({
      replicas: 4,
      maxUnavailable: "50%",
      desired,
      annotations: {
        [Keys.applyVia]: "pull-request",
        [Keys.finalize]: "Recreate",
        [Keys.autogrow]: '{"threshold":"80%","increase":"25%","max":"1Ti"}',
        [Keys.userPartition]: "1",
      },
    });
    const r = policyOf(set);
    if (!r.ok) throw new Error(r.message);
    expect(r.policy).toMatchObject({
      strategy: "InPlace",
      templatesSource: "annotation",
      revision: revisionOf(desired.map(template) as never),
      maxUnavailable: 2,
      ordinals: { start: 0, end: 4, first: 1 },
      applyVia: "pull-request",
      finalize: "Recreate",
      autogrow: { threshold: "80%", increase: "25%", max: "1Ti" },
    });
    expect(r.policy.pods.userPartition).toBe(1);
    expect(r.policy.templates.map((t) => t.spec.resources?.requests?.storage)).toEqual(["2Gi"]);
  });

  it("defaults what is absent: direct, Never, no autogrow, the live templates", () => {
    const r = policyOf(makeSet());
    if (!r.ok) throw new Error(r.message);
    expect(r.policy).toMatchObject({
      templatesSource: "spec",
      applyVia: "direct",
      finalize: "Never",
      autogrow: undefined,
      maxUnavailable: 1,
    });
  });

  it("is Idle for a set not opted in or under OnDelete, before any annotation is judged", () => {
    expect(policyOf(makeSet({ strategy: null, annotations: BAD }))).toMatchObject({ ok: false, reason: "NotOptedIn" });
    expect(policyOf(makeSet({ updateStrategyType: "OnDelete", annotations: BAD }))).toMatchObject({
      ok: false,
      reason: "OnDelete",
    });
  });

  it("refuses in rule order: strategy, templates, maxUnavailable, apply-via, pods, finalize, autogrow", () => {
    expect(policyOf(makeSet({ strategy: "Sideways", annotations: BAD }))).toMatchObject({
      ok: false,
      reason: "InvalidTemplates",
      message: expect.stringContaining("Sideways"),
    });
    expect(policyOf(faultsFrom(Keys.templates))).toMatchObject({
      reason: "InvalidTemplates",
      message: expect.stringContaining("not valid JSON"),
    });
    expect(policyOf(faultsFrom(Keys.applyVia))).toMatchObject({
      reason: "InvalidTemplates",
      message: expect.stringContaining("lots"),
    });
    expect(policyOf(faultsFrom(Keys.applyVia, "1"))).toMatchObject({
      reason: "InvalidApplyVia",
      message: expect.stringContaining("email"),
    });
    expect(policyOf(faultsFrom(Keys.podCoordination, "1"))).toMatchObject({
      reason: "InvalidPolicy",
      message: expect.stringContaining(Keys.podCoordination),
    });
    expect(policyOf(faultsFrom(Keys.finalize, "1"))).toMatchObject({
      reason: "InvalidPolicy",
      message: expect.stringContaining(Keys.finalize),
    });
    expect(policyOf(faultsFrom(Keys.autogrow, "1"))).toMatchObject({
      reason: "InvalidPolicy",
      message: expect.stringContaining(Keys.autogrow),
    });
  });
});
