// The StatefulSet rules of core/kube/statefulset.ts: names, ordinals, maxUnavailable, opt-in.
import { describe, expect, it } from "vitest";
import {
  belowPartition,
  claimName,
  claimOrdinal,
  inScope,
  isCondemned,
  maxUnavailableOf,
  ordinalsOf,
  podName,
  podOrdinal,
} from "../../../core/kube/statefulset.js";
import { isOptedIn, strategyOf } from "../../../core/policy/annotations.js";
import { makeSet } from "../builders.js";

describe("names", () => {
  it("claim <template>-<set>-<ordinal> and pod <set>-<ordinal>, as the StatefulSet controller names them", () => {
    expect(claimName("data", "web", 2)).toBe("data-web-2");
    expect(podName("web", 0)).toBe("web-0");
  });
  it("reads the ordinal back only from a name of that template and set", () => {
    expect(claimOrdinal("data-web-12", "data", "web")).toBe(12);
    expect(claimOrdinal("data-web-x", "data", "web")).toBeUndefined();
    expect(claimOrdinal("data-web-db-1", "data", "web")).toBeUndefined();
    expect(claimOrdinal("wal-web-1", "data", "web")).toBeUndefined();
    expect(podOrdinal("web-3", "web")).toBe(3);
    expect(podOrdinal("web-db-3", "web")).toBeUndefined();
  });
});

describe("ordinals", () => {
  it("scope [start + partition, start + replicas), highest first; below the partition reported apart", () => {
    const o = ordinalsOf(makeSet({ replicas: 4, start: 5, partition: 2 }));
    expect(o).toEqual({ start: 5, end: 9, first: 7 });
    expect(inScope(o)).toEqual([8, 7]);
    expect(belowPartition(o)).toEqual([6, 5]);
    expect([4, 5, 8, 9].map((n) => isCondemned(o, n))).toEqual([true, false, false, true]);
  });
  it("a partition above the replicas leaves nothing in scope", () => {
    expect(inScope(ordinalsOf(makeSet({ replicas: 2, partition: 5 })))).toEqual([]);
  });
});

describe("maxUnavailableOf", () => {
  it.each([
    [undefined, 3, 1],
    [2, 3, 2],
    [0, 3, 1],
    ["50%", 4, 2],
    ["10%", 3, 1],
    ["3", 3, 3],
  ])("%j of %i replicas → %i", (raw, replicas, value) => {
    const set = makeSet({ replicas });
    set.spec.updateStrategy = {
      type: "RollingUpdate",
      rollingUpdate: raw === undefined ? {} : { maxUnavailable: raw },
    };
    expect(maxUnavailableOf(set)).toEqual({ ok: true, value });
  });
  it("anything else says so", () => {
    expect(maxUnavailableOf(makeSet({ maxUnavailable: "half" }))).toEqual({
      ok: false,
      message: 'spec.updateStrategy.rollingUpdate.maxUnavailable "half" is neither an integer nor a percentage',
    });
  });
});

describe("opt-in", () => {
  it("InPlace opts in; absent and OnClaimDelete leave the set alone; anything else is invalid", () => {
    expect(isOptedIn(makeSet())).toBe(true);
    expect(isOptedIn(makeSet({ strategy: null }))).toBe(false);
    expect(strategyOf(makeSet({ strategy: "OnClaimDelete" }))).toEqual({
      kind: "OnClaimDelete",
      value: "OnClaimDelete",
    });
    expect(strategyOf(makeSet({ strategy: "Inplace" }))).toEqual({ kind: "invalid", value: "Inplace" });
  });
});
