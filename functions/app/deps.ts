// What the app is given (functions/app.ts): each runtime wires its own (functions/wiring.ts).
import type { Hono, MiddlewareHandler } from "hono";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
import type { SetRef } from "../../core/types.js";
import type { AuthSettings } from "../http/authenticate.js";
import type { StepOptions, StepResult } from "../step.js";
import type { UiOptions } from "../ui/routes.js";

/**
 * A sub-app whose routes (absolute paths, all under `prefix`) bring their own authentication,
 * e.g. the GitOps webhooks; the body limit still applies. Given as a function of the app's body
 * reader, the sub-app places it in its routes itself: after what it refuses from the headers alone
 * (the forges' required headers), so that such a request is refused before any of its body is read.
 */
export interface Mount {
  prefix: string;
  app: Hono<any> | ((readBody: MiddlewareHandler) => Hono<any>);
}

export interface AppDeps {
  reader: StateReader;
  /** The claim writer for a set (e.g. by `claimstep.io/apply-via`), the set-status writer and the event recorder. */
  writers: Writers;
  auth: AuthSettings;
  now: () => Date;
  /** Namespaces the app may act in; empty = all. */
  namespaces?: readonly string[];
  bodyLimitBytes?: number;
  mounts?: readonly Mount[];
  /** Structured log sink; entries never hold secrets or request headers. */
  log?: (entry: Record<string, unknown>) => void;
  /** The status page (`/ui`, functions/ui/), served when viewer tokens are configured. */
  ui?: UiOptions;
  /** Autogrow's metrics (CLAIMSTEP_PROMETHEUS_URL); absent: sets asking for autogrow go on without it. */
  metrics?: MetricsReader;
  /** Runs the steps that write (not plans) instead of runStep here: the Worker's set objects (functions/fleet/). */
  stepper?: (ref: SetRef) => Promise<StepResult>;
  /** How a step runs here; default runStep. The Node server's records it for its metrics (functions/recorded-step.ts). */
  runStep?: (opts: StepOptions) => Promise<StepResult>;
}
