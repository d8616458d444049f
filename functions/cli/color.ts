// Colour on a terminal only: phases coloured (Complete green, Blocked red, Waiting yellow,
// Progressing cyan, Idle dim), never in a pipe or a file, never with NO_COLOR (no-color.org: set
// and not empty), --no-color or TERM=dumb.
import type { Phase } from "../../core/reasons.js";
import type { CliIO } from "./io.js";

export function colorEnabled(io: CliIO, noColorFlag: boolean | undefined): boolean {
  if (noColorFlag || !io.stdout.isTTY) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "") return false;
  return io.env.TERM !== "dumb";
}

const SGR: Record<Phase, string> = { Complete: "32", Blocked: "31", Waiting: "33", Progressing: "36", Idle: "2" };

/** `phase` in its colour when `on` (any other text as is). */
export const paintPhase = (phase: string, on: boolean): string => {
  const code = SGR[phase as Phase];
  return on && code ? `\x1b[${code}m${phase}\x1b[0m` : phase;
};

/** The phase in the headline of a rendered decision (`ns/name  Phase  Reason…`, its first line). */
export function paintHeadline(text: string, phase: string, on: boolean): string {
  if (!on) return text;
  const end = text.indexOf("\n");
  const first = end < 0 ? text : text.slice(0, end);
  const at = first.indexOf(`  ${phase}  `);
  if (at < 0) return text;
  return `${text.slice(0, at + 2)}${paintPhase(phase, on)}${text.slice(at + 2 + phase.length)}`;
}

/** Terminal control sequences out, for measuring what is shown. */
export const visible = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, "");
