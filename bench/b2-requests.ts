// B2: API requests per step, counted by the simulated cluster's API server (through msw, as the Worker reaches it), at two sizes and three points of
// a rollout (an acting step, a waiting step that repeats, a converged set). The step is the real
// one: functions/step.ts runStep over the direct adapters.
import { runStep } from "../functions/step.js";
import { NAMESPACE, type RolloutStage, SET_NAME } from "./generate.js";
import { directAdapters, simWith, withMsw } from "./sim-set.js";

export const B2_SIZES = [10, 1000] as const;
const STAGES: readonly RolloutStage[] = ["start", "mid", "converged"];

export interface RequestCount {
  replicas: number;
  claims: number;
  stage: RolloutStage;
  decision: string;
  reads: number;
  /** Writes other than events: the claim apply and the StatefulSet annotations. */
  writes: number;
  eventWrites: number;
  byRequest: Record<string, number>;
}

export interface B2Result {
  rows: RequestCount[];
  /** Every stage costs the same at every size. */
  constant: boolean;
  target: { reads: number; writes: number };
}

export async function countStep(replicas: number, stage: RolloutStage): Promise<RequestCount> {
  const fake = simWith({ replicas, stage });
  const { reader, writers } = directAdapters();
  const result = await withMsw(fake, () =>
    runStep({ reader, writers, ref: { namespace: NAMESPACE, name: SET_NAME }, now: new Date("2026-11-30T09:10:00Z") }),
  );
  const c = fake.http.counters();
  const eventWrites = Object.entries(c.byRequest)
    .filter(([k]) => / events$/.test(k) && !/^(get|list) /.test(k))
    .reduce((n, [, v]) => n + v, 0);
  return {
    replicas,
    claims: fake.list("persistentvolumeclaims", NAMESPACE).length,
    stage,
    decision: `${result.decision.phase}/${result.decision.reason} (${result.outcome.kind})`,
    reads: c.reads,
    writes: c.writes - eventWrites,
    eventWrites,
    byRequest: c.byRequest,
  };
}

export async function runB2(log: (line: string) => void = () => {}): Promise<B2Result> {
  const rows: RequestCount[] = [];
  for (const stage of STAGES) {
    for (const n of B2_SIZES) {
      const row = await countStep(n, stage);
      log(
        `  B2 ${n} replicas, ${stage}: ${row.reads} reads, ${row.writes} writes + ${row.eventWrites} event writes (${row.decision})`,
      );
      rows.push(row);
    }
  }
  const constant = STAGES.every((s) => {
    const same = rows.filter((r) => r.stage === s);
    return same.every(
      (r) => r.reads === same[0]!.reads && r.writes === same[0]!.writes && r.eventWrites === same[0]!.eventWrites,
    );
  });
  // 5 reads: the set and its re-create record (GETs), pods, claims, StorageClasses (LISTs).
  return { rows, constant, target: { reads: 5, writes: 2 } };
}
