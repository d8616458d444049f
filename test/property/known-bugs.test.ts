// Real bugs of core/ the property soak found (issues 13 and 18), reduced to small scenarios. A bug still
// open is an `it.fails` (it passes while the bug is there; once fixed, make it a plain `it` and
// drop its classification: knownBug() in scenario.ts, PodLedger.knownBugHits). Bugs 1 and 2 were
// fixed in 4726180: their scenarios stay as regression tests.
import { describe, expect, it } from "vitest";
import { runStep } from "../../functions/step.js";
import { buildCluster, runScenario } from "./harness.js";
import { knownBug, type Scenario } from "./scenario.js";

const base = {
  kind: "clean",
  seed: 1,
  ordinalsStart: 0,
  maxUnavailable: 1,
  parallel: false,
  classes: [{ name: "fast", allowVolumeExpansion: true, driver: { resize: "online", modify: "ok", resizeMs: 4_000 } }],
  templates: [{ name: "data", storageGi: 1, className: "fast" }],
  desired: { growGi: [1], vac: [undefined], label: false },
  faults: {},
  raceRate: 0,
  latency: { resizeMs: 4_000, modifyMs: 1_000, bindMs: 500, podStartMs: 3_000 },
  gapSeconds: [5, 5],
} satisfies Partial<Scenario>;

const BUGS: Record<string, Scenario> = {
  // KNOWN BUG 1: held partition (set --hold-pods), a pod template change, 2 replicas; data-db-1's
  // claims are done and its pod waits for the partition (P3: in flight, the one slot of
  // maxUnavailable 1); a scale-up to 3 adds ordinal 2, whose claims are not done, so the partition
  // target stops at it (P2) — and ordinal 2 never gets a slot: Waiting/PodUpdating for ever.
  "ClaimsFirst: a scale-up while a lower ordinal's pod waits for the partition deadlocks (P2/P3)": {
    ...base,
    replicas: 2,
    vacApi: true,
    desired: { growGi: [1], vac: [null as unknown as undefined], label: false },
    edits: [
      { atStep: 0, kind: "image" },
      { atStep: 2, kind: "scale", replicas: 3 },
    ],
    pods: { claimsFirst: true, hold: true },
  },
  // KNOWN BUG 2: a server without RecoverVolumeExpansionFailure, an offline-only driver,
  // restart-pods WhenRequired; data-db-0 is written 1Gi → 2Gi and the driver answers "in use"
  // (ControllerResizeError); the desired templates are rolled back (1Gi): recoveryOf takes the
  // in-use error for a failed expansion → Blocked/ResizeFailed "recovery needs Kubernetes 1.34",
  // although evicting the pod (R1) would let the expansion finish.
  "an offline-only expansion waiting on its pod is taken for a failed one after a rollback (pre-1.34 server)": {
    ...base,
    replicas: 1,
    vacApi: false,
    classes: [
      { name: "fast", allowVolumeExpansion: true, driver: { resize: "offline", modify: "ok", resizeMs: 4_000 } },
    ],
    // As the soak's replay had it (JSON): the desired template says volumeAttributesClassName null.
    desired: { growGi: [1], vac: [null as unknown as undefined], label: false },
    edits: [{ atStep: 1, kind: "rollback" }],
    pods: { claimsFirst: false, hold: false, restartAfter: "30s" },
  },
};

describe("core bugs found by the soak, fixed (regressions)", () => {
  for (const [name, s] of Object.entries(BUGS)) {
    it(`converges: ${name}`, async () => {
      const r = await runScenario(s);
      expect(r.violations).toEqual([]);
      expect(r.converged).toBe(true);
    });
  }
});

// KNOWN BUG 3 (R3, functions/step.ts with core/plan/verdict.ts): a budget's refusal (429) is recorded in
// `claimstep.io/last-eviction` by a second request (the status merge patch) after the eviction;
// when that request fails (a 500, a lost race), nothing remembers the refusal and the next
// invocation asks again at once, within the two minutes the refused eviction charges the budget.
// The soak meets it with API faults (counted as "known bug 3 hits", not as violations).
describe("known core bug 3: a refused eviction whose record is lost is asked again at once", () => {
  it("asks again no sooner than two minutes after a budget's refusal, even when the record's write failed", async () => {
    const s: Scenario = {
      ...base,
      replicas: 1,
      vacApi: true,
      classes: [
        {
          name: "fast",
          allowVolumeExpansion: true,
          driver: { resize: "online", nodeExpansion: "offline", modify: "ok", resizeMs: 4_000 },
        },
      ],
      edits: [],
      pods: { claimsFirst: false, hold: false, restartAfter: "30s", budget: { minAvailable: 1 } },
    };
    const c = await buildCluster(s);
    const ref = { namespace: "default", name: "db" };
    let armed = false;
    for (let i = 0; i < 40; i++) {
      if (!armed) {
        // The status write right after the first eviction fails (every retry of it).
        c.http.beforeNext("create pods/eviction", () => c.http.failNext("patch statefulsets", { code: 500 }, 10));
        armed = true;
      }
      await runStep({ reader: c.reader, writers: c.writers, ref, now: c.now() }).catch(() => undefined);
      c.advance(5_000);
    }
    const refusals = c.audit
      .filter((e) => e.actor === "claimstep" && e.subresource === "eviction" && e.verb === "create")
      .map((e) => Date.parse(e.at));
    expect(refusals.length).toBeGreaterThan(0);
    for (let i = 1; i < refusals.length; i++) expect(refusals[i]! - refusals[i - 1]!).toBeGreaterThanOrEqual(120_000);
  });
});

// KNOWN BUG 4 (R2, core/plan/pods.ts restartStep): two ordinals in flight, each claim waiting on a
// restart of its pod (node expansion offline); a person lowers maxUnavailable 2 → 1: R2 evicts only
// when the ordinals in flight fit maxUnavailable, and they only leave flight through a restart.
describe("known core bug 4: lowering maxUnavailable below the ordinals waiting on restarts deadlocks", () => {
  const s: Scenario = {
    ...base,
    replicas: 2,
    vacApi: true,
    maxUnavailable: 2,
    classes: [
      {
        name: "fast",
        allowVolumeExpansion: true,
        driver: { resize: "online", nodeExpansion: "offline", modify: "ok", resizeMs: 4_000 },
      },
    ],
    edits: [{ atStep: 3, kind: "maxUnavailable", value: 1 }],
    pods: { claimsFirst: false, hold: false, restartAfter: "30s" },
  };
  it("is no longer classified as a known bug (fixed: restarting the highest in-flight ordinals)", () => {
    expect(knownBug(s)).toBeUndefined();
  });
  it("converges", async () => {
    const r = await runScenario(s);
    expect(r.violations).toEqual([]);
    expect(r.converged).toBe(true);
  });
});

// KNOWN BUG 5 (autogrow, core/plan/autogrow.ts autogrowStep, issue 18): docs/design.md "Autogrow" says one
// growth per revision, but the only record is claimstep.io/autogrown-from, which keeps the *last*
// revision grown from. One replica, data 1Gi, autogrow {threshold 50%, increase 1Gi, max 10Gi}:
// claimstep grows R0 → R1 (2Gi), the disk fills, R1 → R2 (3Gi) and R2 → R3 (4Gi); a person (or a
// GitOps tool) re-applies the manifest, the desired templates are R0 again (1Gi; the claim stays
// 4Gi); the rollout to R0 completes, the disk is 73% full — and claimstep grows from R0 a second
// time (R0 → 5Gi; the record said R2). Bounded: that growth records R0, so a further revert to R0
// is not grown from again. Fixed: the record keeps every revision grown from (the last 16); the
// oracle holds it as A3 again.
describe("known core bug 5: autogrow grows a second time from a revision a person brought back", () => {
  const s: Scenario = {
    ...base,
    seed: 5,
    replicas: 1,
    vacApi: false,
    desired: { growGi: [0], vac: [undefined], label: false },
    gapSeconds: [5, 5],
    edits: [
      { atStep: 0, kind: "workload", index: 0 },
      { atStep: 10, kind: "workload", index: 1 },
      { atStep: 20, kind: "reapply" },
      { atStep: 30, kind: "workload", index: 2 },
      { atStep: 40, kind: "workloadStop" },
    ],
    autogrow: {
      policy: { threshold: "50%", increase: "1Gi", max: "10Gi" },
      // The application's usage set at once (no writing in between): 800Mi, then 1800Mi, then 3000Mi.
      workloads: [800, 1800, 3000].map((startUsedMi) => ({ template: 0, bytesPerSecond: 0, startUsedMi })),
      metricsFailure: 0,
      maxReached: false,
    },
  };

  it("fixed: never grows twice from one revision, and the case converges", async () => {
    const r = await runScenario(s);
    expect(r.violations).toEqual([]);
    expect(r.knownBugHits).toEqual([]);
    expect(r.converged).toBe(true);
  });
});
