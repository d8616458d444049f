// runStep's branches: what happens to the decision and to the cluster when the writer applies,
// proposes, refuses, or the server answers with each of the real error bodies.
import { describe, expect, it } from "vitest";
import { apiErrorFrom, PermissionError } from "../../adapters/api-error.js";
import { Keys } from "../../core/keys.js";
import { recordOf, recreatedManifest } from "../../core/plan/recreate-record.js";
import type { ApplyOutcome, ClaimWriter, Writers } from "../../core/ports.js";
import type { Action, EventRecord, Snapshot } from "../../core/types.js";
import { runStep } from "../../functions/step.js";
import { claimsFor, makeSet, patchOf, snapshot, statusFixture } from "../core/builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const ref = { namespace: "default", name: "web" };

/** Writers that record every call; the claim writer answers as told. */
function recordingWriter(answer: () => Promise<ApplyOutcome>, supports: Action["type"][] = ["PatchClaim"]) {
  const calls = { apply: [] as Action[], annotate: [] as Record<string, string>[], events: [] as EventRecord[] };
  const claims: ClaimWriter = {
    name: "recording",
    supports,
    proposes: false,
    apply: async (a) => {
      calls.apply.push(a);
      return answer();
    },
  };
  const writers: Writers = {
    claims,
    status: {
      annotateSet: async (_ref, annotations) => {
        calls.annotate.push(annotations);
        return undefined;
      },
    },
    events: {
      recordEvents: async (_ref, events) => {
        calls.events.push(...events);
      },
    },
  };
  return { writers, claims, calls };
}

const growing = (): Snapshot => {
  const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
  return snapshot(set, claimsFor(set));
};
const reader = (s: Snapshot) => ({ load: async () => s });
const fails = (file: string) => async (): Promise<ApplyOutcome> => {
  const { code, body } = statusFixture(file);
  throw apiErrorFrom(code, body);
};

describe("runStep", () => {
  it("applies the action, then records status and the ClaimUpdated event", async () => {
    const { writers, calls } = recordingWriter(async () => ({ kind: "applied" }));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.outcome.kind).toBe("applied");
    expect(calls.apply.map((a) => patchOf(a).claim)).toEqual(["data-web-2"]);
    expect(calls.annotate[0]?.[Keys.updateRevision]).toBe(r.decision.revision);
    expect(calls.events.map((e) => e.reason)).toEqual(["ClaimUpdated"]);
  });

  it("dry-run writes nothing", async () => {
    const { writers, calls } = recordingWriter(async () => ({ kind: "applied" }));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW, dryRun: true });
    expect(r.outcome.kind).toBe("dry-run");
    expect(patchOf(r.decision.action)?.claim).toBe("data-web-2");
    expect(calls).toEqual({ apply: [], annotate: [], events: [] });
  });

  it("an action the writer cannot apply blocks with what a person must do", async () => {
    const { writers, calls } = recordingWriter(async () => ({ kind: "applied" }), []);
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.decision).toMatchObject({ phase: "Blocked", reason: "ActionNotSupported" });
    expect(r.decision.message).toContain("kubectl apply --server-side");
    expect(calls.apply).toEqual([]);
    expect(calls.events[0]).toMatchObject({ type: "Warning", reason: "ActionNotSupported" });
  });

  it("a proposal (pull request) makes the step wait for approval", async () => {
    const { writers } = recordingWriter(async () => ({
      kind: "proposed",
      detail: "pull request #7 awaits merge",
      url: "https://example.test/pr/7",
    }));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.decision).toMatchObject({
      phase: "Waiting",
      reason: "AwaitingApproval",
      message: "pull request #7 awaits merge",
    });
    expect(patchOf(r.decision.action)?.claim).toBe("data-web-2");
  });

  it("a writer's refusal blocks with its reason", async () => {
    const { writers, calls } = recordingWriter(async () => ({
      kind: "refused",
      reason: "ChangeRejected",
      message: "pull request #7 was closed without merging",
    }));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.decision).toMatchObject({ phase: "Blocked", reason: "ChangeRejected" });
    expect(JSON.parse(calls.annotate[0]![Keys.status]!)).toMatchObject({ phase: "Blocked", reason: "ChangeRejected" });
  });

  it.each([
    ["pvc-expand-not-allowed.txt", "ExpansionNotAllowed", "must support resize"],
    ["pvc-shrink.txt", "ApplyRejected", "field can not be less than previous value"],
    ["pvc-expand-unbound.txt", "ApplyRejected", "spec is immutable after creation"],
  ])("the server's %s becomes Blocked/%s with the server's message", async (file, reason, text) => {
    const { writers, calls } = recordingWriter(fails(file));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.outcome.kind).toBe("refused");
    expect(r.decision).toMatchObject({ phase: "Blocked", reason });
    expect(r.decision.message).toContain(text);
    expect(calls.events).toEqual([expect.objectContaining({ type: "Warning", reason })]);
  });

  it("a ResourceQuota refusal becomes Blocked/QuotaExceeded", async () => {
    const body = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=3Gi, limited: requests.storage=3Gi',
      reason: "Forbidden",
      details: { name: "data-web-2", kind: "persistentvolumeclaims" },
      code: 403,
    };
    const { writers } = recordingWriter(async () => {
      throw apiErrorFrom(403, body);
    });
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.decision).toMatchObject({ phase: "Blocked", reason: "QuotaExceeded" });
    expect(r.decision.message).toContain("exceeded quota");
  });

  it.each(["pvc-patch-stale-rv.txt"])("a lost race (%s) changes nothing and asks for a retry", async (file) => {
    const { writers, calls } = recordingWriter(fails(file));
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.outcome.kind).toBe("retry");
    expect(calls.annotate).toEqual([]);
    expect(calls.events).toEqual([]);
  });

  it("429 carries Retry-After to the caller", async () => {
    const { writers } = recordingWriter(async () => {
      throw apiErrorFrom(
        429,
        { kind: "Status", code: 429, reason: "TooManyRequests", message: "too many requests" },
        { retryAfterSeconds: 3 },
      );
    });
    const r = await runStep({ reader: reader(growing()), writers, ref, now: NOW });
    expect(r.outcome).toMatchObject({ kind: "retry", retryAfterSeconds: 3 });
  });

  it("RBAC 403 is a configuration error naming the missing permission", async () => {
    const { writers } = recordingWriter(fails("forbidden.txt"));
    await expect(runStep({ reader: reader(growing()), writers, ref, now: NOW })).rejects.toThrow(PermissionError);
    await expect(runStep({ reader: reader(growing()), writers, ref, now: NOW })).rejects.toThrow(
      /missing permission: .*cannot list resource "pods"/,
    );
  });

  it("RBAC 403 on the read is a PermissionError too", async () => {
    const { code, body } = statusFixture("forbidden.txt");
    const { writers } = recordingWriter(async () => ({ kind: "applied" }));
    const denied = {
      load: async () => {
        throw apiErrorFrom(code, body);
      },
    };
    await expect(runStep({ reader: denied, writers, ref, now: NOW })).rejects.toThrow(PermissionError);
  });

  it("the writer may be chosen per set", async () => {
    const a = recordingWriter(async () => ({ kind: "applied" }));
    const r = await runStep({
      reader: reader(growing()),
      writers: { ...a.writers, claims: (s) => (s.statefulSet.metadata.name === "web" ? a.claims : undefined!) },
      ref,
      now: NOW,
    });
    expect(r.writer).toBe("recording");
    expect(a.calls.apply).toHaveLength(1);
  });
});

describe("runStep after the orphan delete (issue 27, found on a real v1.34 server)", () => {
  it("a re-create the server refuses (422) is Blocked with the server's words, never a 404 of the status write on the set that is gone", async () => {
    const set = makeSet();
    const manifest = recreatedManifest(set, set.spec.volumeClaimTemplates ?? []);
    // An armed record whose kept claims are there (F3 creates only from such a record).
    const claims = claimsFor(set, { storage: "1Gi" });
    const kept = { pods: {}, claims: Object.fromEntries(claims.map((c) => [c.metadata.name, c.metadata.uid!])) };
    const record = recordOf(set, manifest, "rev", kept);
    record.data!.armed = "true";
    const missing: Snapshot = { ...snapshot(set, claims), recreateRecord: record, setMissing: true, pods: [] };
    const refusal = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].volumeMounts[1].name: Not found: "logs"',
      reason: "Invalid",
      details: { name: "web", group: "apps", kind: "StatefulSet" },
      code: 422,
    };
    const { writers, calls } = recordingWriter(async () => ({ kind: "applied" }));
    const gone = {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: 'statefulsets.apps "web" not found',
      reason: "NotFound",
      code: 404,
    };
    writers.status = {
      annotateSet: async () => {
        throw apiErrorFrom(404, gone);
      },
    };
    const created: unknown[] = [];
    writers.recreate = {
      writeRecord: async () => ({ kind: "applied", detail: "" }),
      armRecord: async () => ({ kind: "applied", detail: "" }),
      orphanSet: async () => ({ kind: "applied", detail: "" }),
      createSet: async (a) => {
        created.push(a);
        throw apiErrorFrom(422, refusal);
      },
      restoreOwnership: async () => ({ kind: "applied", detail: "" }),
      deleteRecord: async () => ({ kind: "applied", detail: "" }),
      labelClaim: async () => ({ kind: "applied", detail: "" }),
    };
    const r = await runStep({ reader: reader(missing), writers, ref, now: NOW });
    expect(created).toHaveLength(1);
    expect(r.decision.phase).toBe("Blocked");
    expect(r.decision.message).toMatch(/volumeMounts\[1\]\.name: Not found: "logs"/);
    expect(calls.events.map((e) => e.reason)).toContain("ApplyRejected");
  });
});
