// A scenario of the simulated cluster tells a story in the timeline: its summary first, its
// lesson last, as long as the run starts from the set as the scenario set it up.
import type { StatefulSet } from "../../../core/kube/index.js";
import { canonicalTemplate } from "../../../core/kube/index.js";
import { rawAnnotation } from "../../../core/policy/index.js";
import type { SetRef } from "../../../core/types.js";
import { print } from "../io.js";
import type { Target } from "../target.js";
import type { RunSession } from "./session.js";

/** What a scenario's story is about: the set's live claim templates and the changes asked of them. */
const storyKey = (set: StatefulSet): string => {
  const a = set.metadata.annotations;
  return JSON.stringify([
    (set.spec.volumeClaimTemplates ?? []).map(canonicalTemplate),
    ...(["templates", "removeTemplates", "podTemplate", "strategy"] as const).map((k) => rawAnnotation(a, k) ?? null),
  ]);
};

/** Does the set stand as the scenario set it up (so that its story is the one this run tells)? */
export async function storyHolds(target: Target, ref: SetRef): Promise<boolean> {
  if (!target.story?.initial) return true;
  try {
    const [now, initial] = await Promise.all([target.reader.load(ref), target.story.initial()]);
    return !now.setMissing && storyKey(now.statefulSet) === storyKey(initial);
  } catch {
    return false;
  }
}

/** The timeline's heading on a scenario: its story, or that the set changed since (and how to start over); the pace. */
export function tellStory({ ctx, target, ref, timeline, story, interval }: RunSession): void {
  if (!timeline || !target.story) return;
  print(
    ctx.io,
    story
      ? `claimstep run · ${target.label}: ${story.summary}`
      : `claimstep run · ${target.label}: ${ref.name} as it stands, changed since the scenario set it up (claimstep sim reset --cluster sim:${target.story.name}${ctx.flags["sim-state"] ? ` --sim-state ${ctx.flags["sim-state"]}` : ""} starts it over)`,
  );
  print(ctx.io, `one invocation every ${interval / 1000} ${target.frameMs !== undefined ? "virtual " : ""}seconds\n`);
}
