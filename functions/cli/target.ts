// Where a command acts (a real cluster or the simulated one), how it reaches it, and the set it names.
import type { KubeClientOptions } from "../../adapters/kube/client.js";
import type { StatefulSet } from "../../core/kube/index.js";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
import type { SetRef } from "../../core/types.js";
import { type Flags, UsageError } from "./flags.js";

/** Where a command acts: a real cluster or the simulated one. */
export interface Target {
  label: string;
  /** The namespace when none is given. */
  namespace: string;
  reader: StateReader;
  /** The claim writer (per set), and the status writer that also writes the desired templates (`set`). */
  writers: Writers;
  /** Autogrow's metrics (CLAIMSTEP_PROMETHEUS_URL; the simulated cluster's own Prometheus); absent: none. */
  metrics?: MetricsReader;
  /** The opted-in sets of a namespace (undefined: of all), those matching `labelSelector` (`-l`) when given. */
  listOptedIn(namespace: string | undefined, labelSelector?: string): Promise<SetRef[]>;
  /** The names of every StatefulSet of a namespace, opted in or not (the completion of set names). */
  listSets?(namespace: string, signal?: AbortSignal): Promise<string[]>;
  now(): Date;
  /**
   * Wait between the steps of `run` (and the reads of `status --watch`): a real sleep, or virtual
   * time on the simulated cluster. A real sleep ends early when `signal` aborts (stdout closed).
   */
  pause(ms: number, signal?: AbortSignal): Promise<void>;
  /** Real time to leave each frame of the live view on screen when `pause` takes none. */
  frameMs?: number;
  /** Keep what the command did, once it ended (the simulated cluster's state file). */
  save?(): Promise<void>;
  /** A simulated scenario's summary and lesson, told around a timeline. */
  story?: {
    name: string;
    summary: string;
    lesson: string;
    /** The set as the scenario sets it up: the story is told only by a run that starts from it. */
    initial?: () => Promise<StatefulSet>;
  };
  /**
   * Plain requests to the API server, its answer's headers included (`claimstep apply` shows the
   * Warning headers): the server URL, a fetch, the headers of every request (credentials).
   */
  api?: () => Pick<KubeClientOptions, "server" | "fetch" | "headers">;
}

/** How a command reaches its Target (cli.ts passes it on to the connection). */
export interface TargetOptions {
  readOnly?: boolean;
  /** The command line's command and objects, e.g. `run web` (named in the simulated cluster's lock). */
  command?: string;
}

export function refOf(flags: Flags, target: Target, name: string | undefined, what: string): SetRef {
  if (!name) throw new UsageError(`${what}: name the StatefulSet, e.g. claimstep ${what} web -n db`);
  return { namespace: flags.namespace ?? target.namespace, name };
}
