// The Node server's recorder (adapters/metrics-node/registry.ts): one phase series per set, a set's
// series replaced as it changes and removed when it goes, label values escaped.
import { describe, expect, it } from "vitest";
import { PromRecorder } from "../../../adapters/metrics-node/registry.js";
import { outcomeLabel, type SetObservation } from "../../../core/view/recorder.js";

const ref = { namespace: "db", name: "pg" };
const obs = (o: Partial<SetObservation> = {}): SetObservation => ({
  phase: "Progressing",
  reason: "ClaimUpdated",
  counts: { updated: 1, inFlight: 1, pending: 1, blocked: 0 },
  sinceMs: 1_000_000,
  strategy: "InPlace",
  autogrow: false,
  templates: [{ template: "data", desiredBytes: 2048, requestedBytes: 1024 }],
  claims: ["data-pg-0", "data-pg-1", "data-pg-2"],
  ...o,
});
const lines = async (r: PromRecorder, family: string) =>
  (await r.metrics()).split("\n").filter((l) => l.startsWith(`${family}{`) || l.startsWith(`${family} `));

describe("PromRecorder", () => {
  it("keeps one phase series per set: a new phase or reason replaces the old one", async () => {
    const r = new PromRecorder({ defaultMetrics: false, now: () => 1_010_000 });
    r.step({ ref, outcome: "applied", seconds: 0.01, set: obs(), grew: false });
    r.step({
      ref,
      outcome: "complete",
      seconds: 0.01,
      set: obs({ phase: "Complete", reason: "Converged" }),
      grew: false,
    });
    expect(await lines(r, "claimstep_set_phase")).toEqual([
      'claimstep_set_phase{namespace="db",name="pg",phase="Complete",reason="Converged"} 1',
    ]);
    expect(await lines(r, "claimstep_set_phase_age_seconds")).toEqual([
      'claimstep_set_phase_age_seconds{namespace="db",name="pg"} 10',
    ]);
    expect(await lines(r, "claimstep_steps_total")).toEqual([
      'claimstep_steps_total{outcome="applied"} 1',
      'claimstep_steps_total{outcome="complete"} 1',
    ]);
  });

  it("replaces a set's claims, templates, info and threshold as they change, and removes them all when it goes", async () => {
    const r = new PromRecorder({ defaultMetrics: false });
    r.step({ ref, outcome: "applied", seconds: 0.01, set: obs(), grew: false });
    r.step({
      ref,
      outcome: "applied",
      seconds: 0.01,
      set: obs({
        autogrow: true,
        thresholdRatio: 0.8,
        claims: ["data-pg-0"],
        templates: [{ template: "wal", desiredBytes: 10 }],
      }),
      grew: true,
    });
    expect(await lines(r, "claimstep_claim_info")).toEqual([
      'claimstep_claim_info{namespace="db",persistentvolumeclaim="data-pg-0",statefulset="pg",autogrow="true"} 1',
    ]);
    expect(await lines(r, "claimstep_set_desired_bytes")).toEqual([
      'claimstep_set_desired_bytes{namespace="db",name="pg",template="wal"} 10',
    ]);
    expect(await lines(r, "claimstep_set_requested_bytes")).toEqual([]);
    expect(await lines(r, "claimstep_set_info")).toEqual([
      'claimstep_set_info{namespace="db",name="pg",autogrow="true",strategy="InPlace"} 1',
    ]);
    expect(await lines(r, "claimstep_autogrow_threshold_ratio")).toEqual([
      'claimstep_autogrow_threshold_ratio{namespace="db",name="pg"} 0.8',
    ]);
    expect(await lines(r, "claimstep_autogrow_growths_total")).toEqual([
      'claimstep_autogrow_growths_total{namespace="db",name="pg"} 1',
    ]);
    r.setGone(ref);
    const text = await r.metrics();
    expect(text).not.toMatch(/name="pg"|statefulset="pg"/);
    expect(r.setCount).toBe(0);
  });

  it("drops a set that says it is not opted in, and the sets a listing no longer has (of that namespace only)", async () => {
    const r = new PromRecorder({ defaultMetrics: false });
    const other = { namespace: "web", name: "front" };
    r.step({ ref, outcome: "applied", seconds: 0.01, set: obs(), grew: false });
    r.step({ ref: other, outcome: "applied", seconds: 0.01, set: obs(), grew: false });
    r.setsListed("db", []);
    expect(r.setCount).toBe(1);
    r.step({
      ref: other,
      outcome: "idle",
      seconds: 0.01,
      set: obs({ phase: "Idle", reason: "NotOptedIn" }),
      grew: false,
    });
    expect(r.setCount).toBe(0);
    expect(await lines(r, "claimstep_set_phase")).toEqual([]);
  });

  it("escapes label values as the exposition format requires", async () => {
    const r = new PromRecorder({ defaultMetrics: false });
    r.step({ ref, outcome: "refused", seconds: 0.01, set: obs({ strategy: 'in"va\\lid\n' }), grew: false });
    expect(await lines(r, "claimstep_set_info")).toEqual([
      'claimstep_set_info{namespace="db",name="pg",autogrow="false",strategy="in\\"va\\\\lid\\n"} 1',
    ]);
  });

  it("names a step's outcome as claimstep_steps_total does", () => {
    expect(outcomeLabel("applied", "Progressing")).toBe("applied");
    expect(outcomeLabel("proposed", "Waiting")).toBe("proposed");
    expect(outcomeLabel("retry", "Progressing")).toBe("retried");
    expect(outcomeLabel("refused", "Blocked")).toBe("refused");
    expect(outcomeLabel("none", "Blocked")).toBe("refused");
    expect(outcomeLabel("none", "Complete")).toBe("complete");
    expect(outcomeLabel("none", "Idle")).toBe("idle");
    expect(outcomeLabel("none", "Waiting")).toBe("waiting");
    expect(outcomeLabel("none", "Progressing")).toBe("waiting");
  });
});
