// A command's input and output: the terminal's streams and environment, and printing text or
// objects (`-o json`, `-o yaml`).
import YAML from "yaml";
import type { Interrupts } from "./signals.js";

export interface Output {
  write(s: string): void;
  isTTY?: boolean;
  /** Terminal size, when a terminal. */
  rows?: number;
  columns?: number;
}

export interface CliIO {
  stdout: Output;
  stderr: Output;
  env: Record<string, string | undefined>;
  /**
   * The file the shell or kubectl ran (bin/claimstep.js passes argv[1]): `kubectl-claimstep` is the
   * kubectl plugin, whose help and suggested commands say `kubectl claimstep`;
   * `kubectl_complete-claimstep` its completion helper (functions/cli/program.ts).
   */
  invokedAs?: string;
  /** SIGINT and SIGTERM (bin/claimstep.js passes the process's): `run` and `finalize` stop, say where the set stands and exit 130 or 143. */
  interrupts?: Interrupts;
}

/** `-o`: which formats a command offers is in its spec (functions/cli/commands.ts). */
export type OutputFormat = "text" | "json" | "yaml" | "wide" | "timeline";

export const print = (io: CliIO, s: string) => io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);

/** One object as `-o json` (one line) or `-o yaml`; `stream` (one object per step): YAML documents separated by `---`. */
export function emit(ctx: { io: CliIO; format: OutputFormat }, value: unknown, stream = false): void {
  if (ctx.format === "yaml") print(ctx.io, `${stream ? "---\n" : ""}${YAML.stringify(value, { lineWidth: 0 })}`);
  else print(ctx.io, JSON.stringify(value));
}
