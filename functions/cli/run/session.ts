// What one `run` holds from its start to its end: the set it steps, its clocks, how it shows the
// steps (timeline, JSON lines, live view or plain lines) and what the steps so far left behind.
import type { Decision, SetRef } from "../../../core/types.js";
import type { Timeline } from "../../timeline.js";
import type { Context } from "../context.js";
import type { LiveView } from "../live-view.js";
import type { Target } from "../target.js";
import { elapsedSince } from "./clock.js";

export interface RunSession {
  ctx: Context;
  /** `claimstep finalize`: re-create the set with its new templates once complete. */
  finalize: boolean;
  target: Target;
  ref: SetRef;
  /** --interval and --timeout, ms. */
  interval: number;
  timeout: number | undefined;
  /** The cluster's clock and the wall clock when the run started, ms since the epoch. */
  started: number;
  realStart: number;
  timeline: Timeline | undefined;
  live: LiveView | undefined;
  /** The scenario's story, when the run starts from the set as the scenario set it up. */
  story: Target["story"];
  /** The last decision a step made, and the plain line it was said in (repeated lines are not). */
  last: Decision | undefined;
  previous: string;
  /** A step's request is in flight (a signal waits for its answer). */
  inFlight: boolean;
}

/** Since the run started, on whichever clock went further (--timeout). */
export const elapsed = (s: RunSession): number => elapsedSince(s.target.now().getTime(), s.started, s.realStart);
