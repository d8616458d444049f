// `claimstep run -o timeline`: one line per invocation, stamped with the time since the run
// began, identical waiting lines folded, the ordinals' progress when it changes, and what each
// write did. What `npm start` shows of a rollout on the simulated cluster.

import type { ApiError } from "../adapters/api-error.js";
import type { Decision } from "../core/types.js";
import { renderDecision } from "../core/view/index.js";
import type { StepResult } from "./step.js";

const INDENT = " ".repeat(13);

const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
};

const progressOf = (d: Decision): string =>
  d.ordinals
    .filter((o) => o.state !== "OutOfScope" && o.state !== "Condemned")
    .map((o) => `${o.ordinal} ${o.state}`)
    .join(" · ");

export const describeFailure = (err: ApiError): string =>
  `${err.code} ${err.reason ?? err.kind}: ${err.message}${err.retryAfterSeconds !== undefined ? ` (Retry-After ${err.retryAfterSeconds}s)` : ""}`;

/** `1 invocation`, `2 invocations`. */
const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export class Timeline {
  private lastKey = "";
  private lastProgress = "";
  private repeats = 0;
  private quietSince: string | undefined;
  private first = true;
  readonly tally = {
    invocations: 0,
    writes: 0,
    partitionPatches: 0,
    evictions: 0,
    recreate: 0,
    raises: 0,
    failures: 0,
  };

  constructor(
    private readonly say: (line: string) => void,
    private readonly startedMs: number,
  ) {}

  private stamp(atMs: number, n: number): string {
    return `[${clock(atMs - this.startedMs)}] #${String(n).padEnd(3)}`;
  }

  private flush(): void {
    if (this.repeats)
      this.say(`${INDENT}… the same for ${count(this.repeats, "more invocation")} from ${this.quietSince}`);
    this.repeats = 0;
    this.quietSince = undefined;
  }

  /** An invocation that could not even load the set (a transient API failure): nothing was written. */
  failed(atMs: number, n: number, err: ApiError): void {
    this.tally.invocations++;
    this.tally.failures++;
    this.flush();
    this.say(
      `${this.stamp(atMs, n)} ${"(no decision)".padEnd(28)} ↻ could not load the set: ${describeFailure(err)}; nothing was written`,
    );
  }

  step(atMs: number, n: number, r: StepResult): void {
    this.tally.invocations++;
    const d = r.decision;
    if (this.first) this.say(`${renderDecision(d)}\n`);
    this.first = false;
    const key = `${d.phase}|${d.reason}|${d.message}`;
    const o = r.outcome;
    if (key === this.lastKey && !d.action && o.kind !== "retry") {
      this.quietSince ??= clock(atMs - this.startedMs);
      this.repeats++;
    } else {
      this.flush();
      this.say(`${this.stamp(atMs, n)} ${`${d.phase}/${d.reason}`.padEnd(28)} ${d.message}`);
    }
    this.lastKey = key;
    // A set that does not exist (deleted mid re-create) has no ordinals to show: no line, and the
    // progress before it is still the one to compare with once it exists again.
    const progress = progressOf(d);
    if (progress && progress !== this.lastProgress) this.say(`${INDENT}ordinals: ${progress}`);
    if (progress) this.lastProgress = progress;
    if (o.kind === "applied") {
      const type = d.action?.type;
      if (type === "PatchPartition") this.tally.partitionPatches++;
      else if (type === "EvictPod") this.tally.evictions++;
      else if (type === "PatchClaim" || type === undefined) this.tally.writes++;
      else if (type === "RaiseTemplate") this.tally.raises++;
      else this.tally.recreate++;
      this.say(`${INDENT}✓ ${o.detail ?? "applied"}`);
    } else if (o.kind === "proposed") {
      this.say(`${INDENT}⧗ ${o.detail}`);
    } else if (o.kind === "retry") {
      this.tally.failures++;
      this.say(`${INDENT}↻ ${describeFailure(o.error)}; the next invocation re-reads the cluster and continues`);
    } else if (o.kind === "refused") {
      this.say(`${INDENT}✗ the write was refused${o.error ? `: ${describeFailure(o.error)}` : ""}`);
    }
  }

  /** The last decision in full, and what the run cost. */
  end(last: Decision | undefined, atMs: number, realMs: number): void {
    this.flush();
    if (last) this.say(`\n${renderDecision(last)}`);
    const t = this.tally;
    const pods = [
      ...(t.partitionPatches ? [count(t.partitionPatches, "partition patch", "partition patches")] : []),
      ...(t.evictions ? [count(t.evictions, "eviction")] : []),
      ...(t.recreate ? [count(t.recreate, "re-create request")] : []),
      ...(t.raises ? [count(t.raises, "autogrow raise")] : []),
    ];
    this.say(
      `\n${count(t.invocations, "invocation")}, ${count(t.writes, "claim write")}, ${pods.map((p) => `${p}, `).join("")}${count(t.failures, "transient failure")}, ${clock(atMs - this.startedMs)} of cluster time in ${realMs} ms`,
    );
  }
}
