// What every command is given: its flags and arguments, its output and format, the signal that
// stops it, and the way to its Target (cli.ts builds it).
import type { Flags } from "./flags.js";
import type { CliIO, OutputFormat } from "./io.js";
import type { Target, TargetOptions } from "./target.js";

export interface Context {
  flags: Flags;
  args: string[];
  io: CliIO;
  /** `-o json` or `-o yaml`: print objects with `emit`, not text. */
  json: boolean;
  format: OutputFormat;
  /** `-o timeline` (run only). */
  timeline: boolean;
  /** Colour phases: stdout is a terminal, and neither NO_COLOR nor --no-color says otherwise. */
  color: boolean;
  /**
   * Aborts when stdout is gone (a closed pipe), or, for `run` and `finalize`, on SIGINT/SIGTERM
   * (its reason is then the signal's name: interruptOf): long-running commands stop.
   */
  signal: AbortSignal;
  /** The cluster; `readOnly`: the command only reads (the simulated cluster's file is neither locked nor saved). */
  target: (opts?: TargetOptions) => Promise<Target>;
}
