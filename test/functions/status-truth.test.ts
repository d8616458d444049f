// Issue 33, item 4, as an invariant over whole rollouts on the simulated cluster: at every point of
// a run (a controller stepping the set, the clock moving), what the status surfaces show
// (functions/dry-run.ts → core/view/summary.ts) is never Complete while a step would still act, and a
// watch's exit 0 (`done`) always means the next step does nothing. The recorded status — what the
// surfaces read before — breaks it (the planted check below shows the invariant catches that).
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import type { StatefulSet } from "../../core/kube/k8s.js";
import { nothingLeftToDo } from "../../core/plan/decision.js";
import { dryRunOf } from "../../functions/dry-run.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { runStep } from "../../functions/step.js";

const REF = { namespace: "default", name: "web" };

/** The phase the surfaces showed before: the last step's record on the set (or its record's manifest). */
const recordedPhase = (set: StatefulSet): string | undefined => {
  try {
    return JSON.parse(set.metadata.annotations?.[Keys.status] ?? "null")?.phase;
  } catch {
    return undefined;
  }
};

describe("status surfaces never say Complete while a step would still act", () => {
  it.each(["grow", "finalize", "finalize-crash", "add-template", "remove-template", "pods-claims-first"])(
    "sim:%s, at every step of the whole run",
    async (scenario) => {
      const sim = await SCENARIOS[scenario]!.build(1);
      const opts = { reader: sim.reader, writers: sim.writers, ref: REF };
      let recordedLied = 0;
      let checked = 0;
      for (let i = 0; i < 300; i++) {
        const dry = await dryRunOf({ ...opts, now: sim.now() });
        const s = dry.summary;
        const step = await runStep({ ...opts, now: sim.now() });
        const acted = step.decision.action !== undefined || step.decision.requeueAfter !== undefined;
        checked++;
        if (s.phase === "Complete") {
          expect(nothingLeftToDo(dry.planned), `${scenario} step ${i}: ${s.reason}`).toBe(true);
          expect(acted, `${scenario} step ${i}: shown Complete, then the step acted: ${step.decision.reason}`).toBe(
            false,
          );
        }
        expect(s.done).toBe(nothingLeftToDo(dry.planned));
        if (recordedPhase(dry.snapshot.statefulSet) === "Complete" && acted) recordedLied++;
        if (s.done && !acted) break;
        sim.advance(5_000);
      }
      expect(checked).toBeGreaterThan(1);
      // The ended run: nothing left, and the surfaces say Complete.
      const end = await dryRunOf({ ...opts, now: sim.now() });
      expect(end.summary).toMatchObject({ phase: "Complete", done: true, setMissing: false });
      // The recorded status (the annotation kubectl and GitOps tools show) is true as well (issue 34:
      // it said Complete between the claims and the re-create, and between the re-create and the
      // restarts of a reshaped set's pods — RecreateNext and RecreatedPodsNext now).
      expect(recordedLied, `${scenario}: the recorded status said Complete while steps still acted`).toBe(0);
    },
    60_000,
  );
});
