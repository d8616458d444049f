// How a `run` shows each step: a timeline row, a JSON line (YAML document), the live view redrawn,
// or a plain line when something changed.
import { renderDecision } from "../../../core/view/index.js";
import type { StepResult } from "../../step.js";
import { paintHeadline } from "../color.js";
import { emit, print } from "../io.js";
import { outcomeText, plainLine, resultJSON } from "../step-lines.js";
import type { RunSession } from "./session.js";

/** Step `n`'s result `r`, at `now` on the cluster's clock. */
export function showStep(s: RunSession, n: number, now: Date, r: StepResult): void {
  const { ctx, target, timeline, live } = s;
  const d = r.decision;
  if (timeline) {
    timeline.step(now.getTime(), n, r);
  } else if (ctx.json) {
    emit(ctx, { step: n, at: now.toISOString(), ...resultJSON(r) }, true);
  } else if (live) {
    const elapsed = Math.round((now.getTime() - s.started) / 1000);
    live.draw(
      `${paintHeadline(renderDecision(d), d.phase, ctx.color)}\n\nstep ${n} · ${elapsed}s · ${target.label} · ${outcomeText(r)}`,
    );
  } else {
    // A line repeated is left out, but for a write.
    const key = `${d.phase}|${d.reason}|${d.message}|${r.outcome.kind}`;
    if (key !== s.previous || r.outcome.kind === "applied")
      print(ctx.io, paintHeadline(plainLine(now, r), d.phase, ctx.color));
    s.previous = key;
  }
}

/** Virtual time passes at once: the live view waits a frame between steps, to be watched. */
export async function holdFrame({ live, target }: RunSession): Promise<void> {
  if (live && target.frameMs) await new Promise((resolve) => setTimeout(resolve, target.frameMs));
}
