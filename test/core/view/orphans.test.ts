// Issue 27: the claims of a removed template, as `claimstep status` and the set's page list them
// (core/view/orphans.ts): kept, with the command a person runs to delete those no pod mounts.
import { describe, expect, it } from "vitest";
import { orphansView } from "../../../core/view/orphans.js";

const ref = { namespace: "db", name: "web" };

describe("orphansView", () => {
  it("nothing to show without orphaned claims", () => {
    expect(orphansView(ref, undefined)).toBeUndefined();
    expect(orphansView(ref, [])).toBeUndefined();
  });

  it("lists every claim, says which pod still mounts one, and deletes only the others", () => {
    const view = orphansView(ref, [
      { claim: "logs-web-1", template: "logs", mounted: true },
      { claim: "logs-web-0", template: "logs", mounted: false },
      { claim: "logs-web-2", template: "logs", mounted: false },
    ]);
    expect(view).toEqual({
      heading: "Claims of removed templates (kept; claimstep never deletes a claim)",
      claims: [
        { claim: "logs-web-0", template: "logs", mounted: false, note: "no pod mounts it" },
        {
          claim: "logs-web-1",
          template: "logs",
          mounted: true,
          pod: "web-1",
          note: "still mounted by web-1 until it restarts",
        },
        { claim: "logs-web-2", template: "logs", mounted: false, note: "no pod mounts it" },
      ],
      command: "kubectl delete pvc -n db logs-web-0 logs-web-2",
    });
  });

  it("no command while every claim is still mounted; a claim of another shape names no pod", () => {
    const mounted = orphansView(ref, [{ claim: "logs-web-0", template: "logs", mounted: true }]);
    expect(mounted!.claims.map((c) => c.note)).toEqual(["still mounted by web-0 until it restarts"]);
    expect(mounted).not.toHaveProperty("command");
    expect(orphansView(ref, [{ claim: "odd", template: "logs", mounted: true }])!.claims[0]!.note).toBe(
      "still mounted by a pod of web until it restarts",
    );
  });
});
