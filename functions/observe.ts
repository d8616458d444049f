// The Worker's observability (issue 25): the events the Node server counts as Prometheus metrics
// (steps, API calls, deliveries, autogrow), as one JSON log line each for Workers Logs, and as a
// Workers Analytics Engine data point when the CLAIMSTEP_ANALYTICS binding is configured. The
// schema, the data point's layout and example SQL: docs/observability-workers.md. Worker-safe (no
// Node built-ins); nothing here reads a header, a body or a query string, so no secret can reach
// a line or a data point.
import { phaseShown } from "../core/plan/index.js";
import type { MetricsReader } from "../core/ports.js";
import type { SetRef } from "../core/types.js";
import {
  type AdmissionResult,
  type ApiRequestRecord,
  type DeliveryResult,
  type DeliverySource,
  type StepOutcomeLabel as NodeOutcome,
  outcomeLabel,
} from "../core/view/index.js";
import { runStep, type StepOptions, type StepResult } from "./step.js";

/** The `schema` field of every line: bumped when a field changes meaning or position. */
export const EVENT_SCHEMA = "claimstep.event.v1";
/** The Analytics Engine binding read from env (wrangler.toml `[[analytics_engine_datasets]]`). */
export const ANALYTICS_BINDING = "CLAIMSTEP_ANALYTICS";
/** Longest string field, in UTF-8 bytes (Kubernetes names are at most 253). */
export const BLOB_MAX_BYTES = 256;
/** Analytics Engine's limit for the one index. */
export const INDEX_MAX_BYTES = 96;

/** claimstep_steps_total's outcomes (core/view/recorder.ts), and "error": the step threw (the Node server observes only its duration). */
export type StepOutcomeLabel = NodeOutcome | "error";

/** One event: what the Node server's recorder (core/view/recorder.ts) is told, as one record. `cluster`: the fleet's cluster. */
export type ObservedEvent = { cluster?: string } & (
  | {
      event: "step";
      namespace: string;
      name: string;
      outcome: StepOutcomeLabel;
      phase: string;
      reason: string;
      durationSeconds: number;
    }
  | { event: "api_request"; verb: string; resource: string; code: string; durationSeconds: number }
  | { event: "delivery"; source: DeliverySource; result: DeliveryResult; code: string }
  | { event: "admission_review"; result: AdmissionResult; code: string }
  | { event: "autogrow_growth"; namespace: string; name: string }
  | { event: "prometheus_query_failure" }
);

export type EventSink = (e: ObservedEvent) => void;

export interface AnalyticsDataset {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

const encoder = new TextEncoder();
/** `s` cut to at most `max` UTF-8 bytes (never inside a character). */
const clip = (s: string, max = BLOB_MAX_BYTES): string => {
  if (s.length * 3 <= max) return s;
  const b = encoder.encode(s);
  return b.length <= max ? s : new TextDecoder().decode(b.subarray(0, max)).replace(/\uFFFD+$/, "");
};

/** The Workers Logs line of an event: `schema`, `event`, then its fields (strings bounded). */
export const logLine = (e: ObservedEvent): Record<string, unknown> => {
  const line: Record<string, unknown> = { schema: EVENT_SCHEMA };
  for (const [k, v] of Object.entries(e)) line[k] = typeof v === "string" ? clip(v) : v;
  return line;
};

// The data point's blobs, by position (blob1 … blob11): the same for every event, "" where absent.
const BLOBS = [
  "event",
  "cluster",
  "namespace",
  "name",
  "outcome",
  "phase",
  "reason",
  "verb",
  "resource",
  "code",
  "source",
] as const;

/** The Analytics Engine data point: index = the set (cluster/namespace/name) or the event; double1 = seconds, double2 = 1. */
export const dataPoint = (e: ObservedEvent) => {
  const f = e as Record<string, unknown>;
  const set = "namespace" in e ? [e.cluster, e.namespace, e.name].filter((x) => x !== undefined).join("/") : e.event;
  return {
    indexes: [clip(set, INDEX_MAX_BYTES)],
    blobs: BLOBS.map((k) => clip(String(f[k === "outcome" && e.event === "delivery" ? "result" : k] ?? ""))),
    doubles: [typeof f.durationSeconds === "number" ? f.durationSeconds : 0, 1],
  };
};

/** Each event: a log line, and a data point when the binding is there (its failure never fails the caller). */
// The envs whose CLAIMSTEP_ANALYTICS was found not to be a dataset (said once per isolate).
const misbound = new WeakSet<object>();

export const eventSink = (env: Record<string, unknown>, write: (line: string) => void = console.log): EventSink => {
  let dataset = env[ANALYTICS_BINDING] as AnalyticsDataset | undefined;
  if (dataset !== undefined && typeof dataset?.writeDataPoint !== "function") {
    dataset = undefined;
    if (!misbound.has(env)) {
      misbound.add(env);
      write(
        JSON.stringify({
          msg: "configuration error",
          error: `${ANALYTICS_BINDING} is not a Workers Analytics Engine dataset: bind it under [[analytics_engine_datasets]] in wrangler.toml (binding = "${ANALYTICS_BINDING}"), or remove it; events go to the log only`,
        }),
      );
    }
  }
  return (e) => {
    write(JSON.stringify(logLine(e)));
    try {
      dataset?.writeDataPoint(dataPoint(e));
    } catch {
      // The dataset is an extra: the log line has the event.
    }
  };
};

const seconds = (since: number) => (Date.now() - since) / 1000;

/**
 * The hooks the Node server's recorder uses, feeding `sink`: the Kubernetes client's `onRequest`,
 * and wire()'s `runStep` (a plan records nothing) and `wrapMetrics` (a reading that is not ok is a
 * failed Prometheus query).
 */
export const observing = (sink: EventSink, cluster?: string) => {
  const c = cluster !== undefined ? { cluster } : {};
  return {
    onRequest: (r: ApiRequestRecord) =>
      sink({
        ...c,
        event: "api_request",
        verb: r.verb,
        resource: r.resource,
        code: String(r.code),
        durationSeconds: r.seconds,
      }),
    runStep: (o: StepOptions) => (o.dryRun ? runStep(o) : observeStep(sink, o.ref, () => runStep(o), cluster)),
    wrapMetrics: (m: MetricsReader): MetricsReader => ({
      usage: async (...args) => {
        const reading = await m.usage(...args);
        if (!reading.ok) sink({ ...c, event: "prometheus_query_failure" });
        return reading;
      },
    }),
  };
};

/** The contract's outcome of a step's result. */
export const stepOutcomeOf = (r: StepResult): StepOutcomeLabel => outcomeLabel(r.outcome.kind, r.decision.phase);

/** Runs a step, recording it (and an autogrow raise it applied or proposed); a thrown step is outcome "error". */
export async function observeStep(
  record: EventSink,
  ref: SetRef,
  run: () => Promise<StepResult>,
  cluster?: string,
): Promise<StepResult> {
  const c = cluster !== undefined ? { cluster } : {};
  const started = Date.now();
  try {
    const r = await run();
    const outcome = stepOutcomeOf(r);
    record({
      ...c,
      event: "step",
      ...ref,
      outcome,
      // Complete only when nothing is left to do, as claimstep_set_phase and every status surface say.
      phase: phaseShown(r.decision),
      reason: r.decision.reason,
      durationSeconds: seconds(started),
    });
    if (r.decision.action?.type === "RaiseTemplate" && (outcome === "applied" || outcome === "proposed"))
      record({ ...c, event: "autogrow_growth", ...ref });
    return r;
  } catch (err) {
    record({
      ...c,
      event: "step",
      ...ref,
      outcome: "error",
      phase: "",
      reason: String((err as { kind?: string }).kind ?? (err as Error).name),
      durationSeconds: seconds(started),
    });
    throw err;
  }
}

const DELIVERY =
  /^(?:\/v1\/clusters\/([^/]+))?\/v1\/(relay|webhooks\/github|webhooks\/gitlab|steps|statefulsets\/[^/]+\/[^/]+\/templates|admission\/statefulsets(?:\/by-namespace)?)$/;

/**
 * The delivery an inbound POST was (the relay's, a forge's webhook, an API step or templates
 * request), or the admission review, by its answer: as the Node server counts them.
 */
export async function deliveryOf(request: Request, response: Response): Promise<ObservedEvent | undefined> {
  const path = new URL(request.url).pathname.replace(/^\/v1\/clusters\/([^/]+)\//, "/v1/clusters/$1/v1/");
  const m = request.method === "POST" ? DELIVERY.exec(path) : null;
  if (!m) return undefined;
  const s = response.status;
  const body =
    s === 401 || s === 503 || m[2]!.startsWith("a")
      ? ((await response
          .clone()
          .json()
          .catch(() => undefined)) as any)
      : undefined;
  const c = { ...(m[1] !== undefined ? { cluster: clip(m[1]) } : {}), code: String(s) };
  if (m[2]!.startsWith("a")) {
    const r = body?.response;
    return {
      ...c,
      event: "admission_review",
      result: s !== 200 || r?.allowed !== true ? "error" : r.patch ? "patched" : "allowed",
    };
  }
  return {
    ...c,
    event: "delivery",
    source: m[2]!.startsWith("s") ? "api" : (m[2]!.replace("webhooks/", "") as "relay"),
    // 401 Replayed: received before; 503 with a decision: the step ran and will be retried.
    result:
      s === 202
        ? "ignored"
        : s < 300 || (s === 503 && body?.decision !== undefined)
          ? "accepted"
          : body?.failure === "Replayed"
            ? "replayed"
            : "refused",
  };
}
