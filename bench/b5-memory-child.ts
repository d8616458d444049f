// B5's measured process (run by b5-memory.ts with --expose-gc --trace-gc): load and plan one
// large set between forced full GCs. The forced GCs are the markers the parent finds in V8's
// GC trace ("testing"): between two of them, the heap only grows until a GC, so the largest
// "before" size of the GCs in that window (and the size at its end) is the peak used heap.
import { planStep } from "../core/plan/plan.js";
import {
  DIRECT_WRITER,
  GENERATED_AT,
  generateCluster,
  parseResponses,
  responseBytes,
  responsesOf,
} from "./generate.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("b5-memory-child must run with node --expose-gc");

const replicas = Number(process.argv[2] ?? 10_000);
const MiB = 1024 * 1024;
const used = () => process.memoryUsage().heapUsed / MiB;

let responses: ReturnType<typeof responsesOf> | undefined = responsesOf(generateCluster({ replicas, stage: "mid" }));
const bytes = responseBytes(responses);
gc(); // marker 1: only the response bodies are alive
const withResponses = used();
const snapshot = parseResponses(responses);
responses = undefined; // a step may drop the text once parsed
gc(); // marker 2: the parsed snapshot is alive
const withSnapshot = used();
const decision = planStep(snapshot, GENERATED_AT, DIRECT_WRITER);
const atEnd = used();
gc(); // marker 3: snapshot and decision alive
const withDecision = used();

process.stdout.write(
  `B5RESULT ${JSON.stringify({
    replicas,
    claims: snapshot.claims.length,
    responseMiB: bytes / MiB,
    withResponsesMiB: withResponses,
    withSnapshotMiB: withSnapshot,
    atEndOfPlanMiB: atEnd,
    withDecisionMiB: withDecision,
    decision: `${decision.phase}/${decision.reason}`,
  })}\n`,
);
