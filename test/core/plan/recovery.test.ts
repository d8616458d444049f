// X1–X3 of docs/design.md ("Recovering from a failed expansion"): a claim whose expansion failed comes
// back down to a lowered template, only when the API server accepts it.
import { describe, expect, it } from "vitest";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import type { Decision, PatchClaim, Snapshot } from "../../../core/types.js";
import { type ClaimSpec, claimsFor, DIRECT, makeClaim, makeSet, patchOf, snapshot, template } from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const plan = (s: Snapshot): Decision => planStep(s, NOW, DIRECT);
const failedRevision = revisionOf([template({ name: "data", storage: "1Ti" })] as never);

/** Set `web` (template data 10Gi live), its desired template `storage`; data-web-2 asked for 1Ti and `c` says how that went. */
function at(storage: string, c: ClaimSpec): Decision {
  const set = makeSet({ live: [{ name: "data", storage: "10Gi" }], desired: [{ name: "data", storage }] });
  const claims = claimsFor(set, { storage: "10Gi" });
  claims[2] = makeClaim("data-web-2", {
    storage: "1Ti",
    capacity: "10Gi",
    allocated: "1Ti",
    revision: failedRevision,
    ...c,
  });
  return plan(snapshot(set, claims));
}

const infeasible: ClaimSpec = {
  allocatedResourceStatus: "ControllerResizeInfeasible",
  conditions: [{ type: "ControllerResizeError", message: "requested size 1Ti is not supported by the backend" }],
};

describe("X1: a failed expansion comes down to the template", () => {
  it("ControllerResizeInfeasible, template 20Gi above capacity 10Gi: PatchClaim lowering the request to 20Gi", () => {
    const d = at("20Gi", infeasible);
    expect(d).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated" });
    expect(d.action).toMatchObject({
      type: "PatchClaim",
      claim: "data-web-2",
      storage: "20Gi",
    } satisfies Partial<PatchClaim>);
    expect(d.message).toContain("storage 1Ti → 20Gi");
    expect(d.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.target).toBe("20Gi");
  });

  it("NodeResizeInfeasible counts as failed too", () => {
    const d = at("20Gi", {
      allocatedResourceStatus: "NodeResizeInfeasible",
      conditions: [{ type: "NodeResizeError", message: "resize2fs failed" }],
    });
    expect(d.action).toMatchObject({ claim: "data-web-2", storage: "20Gi" });
  });

  it("one byte above capacity is enough", () => {
    const d = at("10737418241", infeasible);
    expect(d.action).toMatchObject({ claim: "data-web-2", storage: "10737418241" });
  });

  it("after the lowering, a claim still marked infeasible at the old size waits for the resizer (not Blocked)", () => {
    const set = makeSet({ live: [{ name: "data", storage: "10Gi" }], desired: [{ name: "data", storage: "20Gi" }] });
    const claims = claimsFor(set, { storage: "10Gi" });
    const r = revisionOf([template({ name: "data", storage: "20Gi" })] as never);
    claims[2] = makeClaim("data-web-2", {
      storage: "20Gi",
      capacity: "10Gi",
      allocated: "1Ti",
      revision: r,
      ...infeasible,
    });
    const d = plan(snapshot(set, claims));
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
    expect(d.action).toBeUndefined();
    expect(d.message).toContain("waiting for the resizer to retry at the request 20Gi");
  });
});

describe("X2: when the claim cannot come down (issue 36 point 4: the KEP proceeds)", () => {
  it("template at capacity: ready as the KEP says (capacity ≥ min(template, request)): the revision stamped, the request kept, the rollout goes on", () => {
    const d = at("10Gi", infeasible);
    expect(d).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated" });
    expect(patchOf(d.action)).toMatchObject({ claim: "data-web-2", storage: "1Ti" });
    expect(d.message).toContain(
      "data-web-2 still requests 1Ti, which its storage could not provide (ControllerResizeInfeasible); it stays at 10Gi, all the template's 10Gi needs, so the rollout goes on",
    );
  });

  it("…the claim at the revision: the rollout completes, the claim still reported (status message, Warning Event) with the exact kubectl command", () => {
    const set = makeSet({ live: [{ name: "data", storage: "10Gi" }], desired: [{ name: "data", storage: "10Gi" }] });
    const r10 = revisionOf([template({ name: "data", storage: "10Gi" })] as never);
    const claims = claimsFor(set, { storage: "10Gi", revision: r10 });
    claims[2] = makeClaim("data-web-2", {
      storage: "1Ti",
      capacity: "10Gi",
      allocated: "1Ti",
      revision: r10,
      ...infeasible,
    });
    const d = plan(snapshot(set, claims));
    expect(d).toMatchObject({ phase: "Complete", reason: "RolloutComplete" });
    expect(d.action).toBeUndefined();
    expect(d.message).toContain(
      `kubectl -n default patch pvc data-web-2 --type merge -p '{"spec":{"resources":{"requests":{"storage":"11Gi"}}}}'`,
    );
    expect(d.events).toContainEqual(
      expect.objectContaining({
        type: "Warning",
        reason: "ResizeFailed",
        note: expect.stringContaining("data-web-2 still requests 1Ti"),
      }),
    );
    expect(d.status.message).toContain("data-web-2 still requests 1Ti");
  });

  it("template below capacity: the same", () => {
    const d = at("5Gi", infeasible);
    expect(d.phase).not.toBe("Blocked");
    expect(d.message).toContain("it stays at 10Gi, all the template's 5Gi needs");
  });

  it("a server reporting no allocatedResourceStatuses: Blocked/ResizeFailed, recovery needs Kubernetes 1.34 or later", () => {
    const d = at("20Gi", {
      allocated: undefined as never,
      conditions: [{ type: "ControllerResizeError", message: "requested size 1Ti is not supported" }],
    });
    expect(d).toMatchObject({ phase: "Blocked", reason: "ResizeFailed" });
    expect(d.action).toBeUndefined();
    expect(d.message).toContain("recovery needs Kubernetes 1.34 or later");
  });

  it("…but a volume in use (an offline-only driver waiting on its pod) is no failure: the request stays, nothing blocks", () => {
    const d = at("20Gi", {
      allocated: undefined as never,
      conditions: [
        {
          type: "ControllerResizeError",
          message: "volume pvc-1 is in use by pod web-2; the driver only supports offline expansion",
        },
      ],
    });
    expect(d.phase).not.toBe("Blocked");
    expect(d.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.target).toBe("1Ti");
  });
});

describe("X3: never for an expansion in progress or succeeded", () => {
  const notLowered = (d: Decision) => {
    if (d.action?.type === "PatchClaim" && patchOf(d.action).claim === "data-web-2")
      expect(patchOf(d.action).storage).toBe("1Ti");
    expect(d.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.target).toBe("1Ti");
  };
  it("ControllerResizeInProgress: the request stays", () =>
    notLowered(
      at("20Gi", { allocatedResourceStatus: "ControllerResizeInProgress", conditions: [{ type: "Resizing" }] }),
    ));
  it("NodeResizePending (the controller succeeded): the request stays", () =>
    notLowered(at("20Gi", { allocatedResourceStatus: "NodeResizePending" })));
  it("NodeResizeInProgress: the request stays", () =>
    notLowered(at("20Gi", { allocatedResourceStatus: "NodeResizeInProgress" })));
  it("succeeded (capacity 1Ti): the request stays", () => notLowered(at("20Gi", { capacity: "1Ti" })));
  it("a retrying error with the resize in progress: the request stays", () =>
    notLowered(
      at("20Gi", {
        allocatedResourceStatus: "ControllerResizeInProgress",
        conditions: [{ type: "ControllerResizeError", message: "timeout" }],
      }),
    ));
});

describe("X2 only for claimstep's own claims", () => {
  it("a failed request someone else raised (no revision label), template at capacity: satisfied as in rule 5, no RecoveryNotPossible", () => {
    const set = makeSet({ live: [{ name: "data", storage: "10Gi" }], desired: [{ name: "data", storage: "10Gi" }] });
    const claims = claimsFor(set, { storage: "10Gi" });
    claims[2] = makeClaim("data-web-2", { storage: "1Ti", capacity: "10Gi", allocated: "1Ti", ...infeasible });
    const d = plan(snapshot(set, claims));
    expect(d.reason).not.toBe("RecoveryNotPossible");
    expect(patchOf(d.action)?.storage).not.toBe("10Gi");
  });
});

describe("issue 36 point 7: Blocked/ResizeFailed names the way out (X1) in sizes a person writes", () => {
  it("template 20Gi, claim at 20Gi infeasible at capacity 4Gi: claimstep set web data --storage 5Gi", () => {
    const set = makeSet({ live: [{ name: "data", storage: "4Gi" }], desired: [{ name: "data", storage: "20Gi" }] });
    const r20 = revisionOf([template({ name: "data", storage: "20Gi" })] as never);
    const claims = claimsFor(set, { storage: "4Gi" });
    claims[2] = makeClaim("data-web-2", {
      storage: "20Gi",
      capacity: "4Gi",
      allocated: "20Gi",
      revision: r20,
      allocatedResourceStatus: "ControllerResizeInfeasible",
      conditions: [
        { type: "ControllerResizeError", message: "Requested capacity 21474836480 exceeds maximum allowed 8589934592" },
      ],
    });
    const d = plan(snapshot(set, claims));
    expect(d).toMatchObject({ phase: "Blocked", reason: "ResizeFailed" });
    expect(d.message).toContain(
      "set the desired template to more than the claim's capacity 4Gi and no more than the storage provides, e.g. claimstep set web data --storage 5Gi: claimstep lowers the claim's request from 20Gi to it",
    );
    expect(d.message).not.toMatch(/4294967297/);
  });
});
