import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodeLabelSelector,
  LabelSelectorError,
  matchesLabels,
  parseLabelSelector,
} from "../../../adapters/kube/label-selector.js";
import type { LabelSelector } from "../../../core/kube/k8s.js";

/** What a LabelSelector means, straight from its definition (metav1.LabelSelector). */
function selects(sel: LabelSelector, labels: Record<string, string>): boolean {
  const has = (k: string) => Object.hasOwn(labels, k);
  return (
    Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
    (sel.matchExpressions ?? []).every((e) => {
      switch (e.operator) {
        case "In":
          return has(e.key) && e.values!.includes(labels[e.key]!);
        case "NotIn":
          return !has(e.key) || !e.values!.includes(labels[e.key]!);
        case "Exists":
          return has(e.key);
        case "DoesNotExist":
          return !has(e.key);
      }
    })
  );
}

describe("encodeLabelSelector", () => {
  it("writes matchLabels and every operator in the API server's syntax", () => {
    expect(
      encodeLabelSelector({
        matchLabels: { "app.kubernetes.io/name": "db", app: "web" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["db", "cache"] },
          { key: "zone", operator: "NotIn", values: ["b"] },
          { key: "ready", operator: "Exists" },
          { key: "canary", operator: "DoesNotExist" },
        ],
      }),
    ).toBe("app=web,app.kubernetes.io/name=db,tier in (cache,db),zone notin (b),ready,!canary");
    expect(encodeLabelSelector({})).toBe("");
  });

  it("percent-encodes through URLSearchParams", () => {
    const q = new URLSearchParams({
      labelSelector: encodeLabelSelector({
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "t", operator: "In", values: ["a", "b"] }],
      }),
    });
    expect(q.toString()).toBe("labelSelector=app%3Dweb%2Ct+in+%28a%2Cb%29");
  });

  it("refuses In/NotIn without values and Exists with values, naming the key", () => {
    expect(() => encodeLabelSelector({ matchExpressions: [{ key: "tier", operator: "In", values: [] }] })).toThrow(
      LabelSelectorError,
    );
    expect(() =>
      encodeLabelSelector({ matchExpressions: [{ key: "tier", operator: "Exists", values: ["x"] }] }),
    ).toThrow(/"tier": operator Exists takes no values/);
  });

  it("means what the selector means (property: the API server's parser agrees on random selectors and labels)", () => {
    const key = fc.constantFrom("app", "tier", "zone", "example.com/role");
    const value = fc.constantFrom("a", "b", "web", "db-1", "x.y");
    const expr = fc.oneof(
      fc.record({
        key,
        operator: fc.constantFrom("In" as const, "NotIn" as const),
        values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({ key, operator: fc.constantFrom("Exists" as const, "DoesNotExist" as const) }),
    );
    const selector = fc.record({
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(expr, { maxLength: 3 }),
    });
    const labels = fc.dictionary(key, value, { maxKeys: 4 });
    fc.assert(
      fc.property(selector, labels, (sel, l) => {
        expect(matchesLabels(parseLabelSelector(encodeLabelSelector(sel)), l)).toBe(selects(sel, l));
      }),
      { numRuns: 300 },
    );
  });
});
