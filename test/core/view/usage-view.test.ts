// The status page's autogrow bars (core/view/usage-view.ts): each claim's usage against the set's
// threshold, from the reading autogrow itself takes (one query per set).
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { usageView } from "../../../core/view/usage-view.js";
import { makeSet } from "../builders.js";

const GI = 1024n ** 3n;
const withPolicy = (policy: object | string) => {
  const set = makeSet({
    live: [
      { name: "data", storage: "1Gi" },
      { name: "wal", storage: "1Gi" },
    ],
    desired: [
      { name: "data", storage: "1Gi" },
      { name: "wal", storage: "1Gi" },
    ],
  });
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.autogrow]: typeof policy === "string" ? policy : JSON.stringify(policy),
  };
  return set;
};
const CLAIMS = [
  { claim: "data-web-1", template: "data" },
  { claim: "wal-web-1", template: "wal" },
  { claim: "data-web-0", template: "data" },
  { claim: "wal-web-0", template: "wal" },
];

describe("usageView", () => {
  it("a set without autogrow has no bars", () => {
    const set = makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "1Gi" }] });
    expect(usageView(set, CLAIMS, { ok: true, volumes: [] })).toBeUndefined();
  });

  it("one bar per claim of the policy's template, in the table's order, with the threshold and who is over it", () => {
    const set = withPolicy({ threshold: "80%", increase: "50%", max: "8Gi", template: "data" });
    const view = usageView(set, CLAIMS, {
      ok: true,
      volumes: [
        { claim: "data-web-0", usedBytes: GI / 4n, capacityBytes: GI },
        { claim: "data-web-1", usedBytes: (GI * 7n) / 8n, capacityBytes: GI },
        { claim: "wal-web-0", usedBytes: GI, capacityBytes: GI },
      ],
    });
    expect(view).toEqual({
      threshold: "80%",
      thresholdPercent: 80,
      template: "data",
      bars: [
        { claim: "data-web-1", percent: 87.5, used: "896Mi", capacity: "1Gi", over: true },
        { claim: "data-web-0", percent: 25, used: "256Mi", capacity: "1Gi", over: false },
      ],
      unread: [],
    });
  });

  it("claims with no reading are named; a failed reading or no Prometheus says why, with no bar", () => {
    const set = withPolicy({ threshold: "12.5%", increase: "1Gi", max: "8Gi" });
    const view = usageView(set, CLAIMS, {
      ok: true,
      volumes: [{ claim: "wal-web-0", usedBytes: GI / 8n, capacityBytes: GI }],
    })!;
    expect(view.thresholdPercent).toBe(12.5);
    expect(view.bars).toEqual([{ claim: "wal-web-0", percent: 12.5, used: "128Mi", capacity: "1Gi", over: true }]);
    expect(view.unread).toEqual(["data-web-1", "wal-web-1", "data-web-0"]);
    expect(usageView(set, CLAIMS, { ok: false, message: "Prometheus at http://p is unreachable" })).toMatchObject({
      bars: [],
      error: "Prometheus at http://p is unreachable",
    });
    expect(usageView(set, CLAIMS, undefined)?.error).toContain("CLAIMSTEP_PROMETHEUS_URL");
  });

  it("an invalid policy: no bars, the policy's own error", () => {
    const view = usageView(withPolicy("{"), CLAIMS, undefined)!;
    expect(view.bars).toEqual([]);
    expect(view.error).toContain(Keys.autogrow);
  });
});
