// The Node server's recorder (core/recorder.ts) on prom-client: the series of docs/operating.md
// "Metrics", in a registry of its own, exposed by GET /metrics. Node only: the Worker never loads
// this file (prom-client needs Node). Not to be confused with ./prometheus.ts, autogrow's
// Prometheus query client.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type {
  AdmissionResult,
  ApiRequestRecord,
  DeliveryResult,
  DeliverySource,
  Recorder,
  SetObservation,
  StepRecord,
} from "../../core/recorder.js";
import type { SetRef } from "../../core/types.js";

/** Step durations: a converged set's step takes milliseconds, an acting one a few requests, a slow API server seconds. */
export const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** One API request: the client's timeout is 10 s. */
export const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STATES = [
  ["updated", "updated"],
  ["in_flight", "inFlight"],
  ["pending", "pending"],
  ["blocked", "blocked"],
] as const;

type Labels = Record<string, string>;

/** What a set holds in the registry, to remove exactly its series when it changes or goes. */
interface SetSeries {
  ref: SetRef;
  phase?: Labels;
  info?: Labels;
  templates: string[];
  claims: Labels[];
  threshold: boolean;
  sinceMs?: number;
  growths: boolean;
}

export interface PromRecorderOptions {
  /** The clock phase ages count on (the simulated cluster's in the playground). */
  now?: () => number;
  /** Also collect prom-client's default process_* and nodejs_* metrics (default true). */
  defaultMetrics?: boolean;
}

const keyOf = (ref: SetRef) => `${ref.namespace}/${ref.name}`;

export class PromRecorder implements Recorder {
  readonly registry = new Registry();
  private readonly sets = new Map<string, SetSeries>();
  private readonly now: () => number;
  private holdsLease: () => boolean = () => false;

  private readonly phase: Gauge<string>;
  private readonly ordinals: Gauge<string>;
  private readonly phaseAge: Gauge<string>;
  private readonly requested: Gauge<string>;
  private readonly desired: Gauge<string>;
  private readonly info: Gauge<string>;
  private readonly claimInfo: Gauge<string>;
  private readonly threshold: Gauge<string>;
  private readonly steps: Counter<string>;
  private readonly stepSeconds: Histogram<string>;
  private readonly apiRequests: Counter<string>;
  private readonly apiSeconds: Histogram<string>;
  private readonly deliveries: Counter<string>;
  private readonly admissions: Counter<string>;
  private readonly growths: Counter<string>;
  private readonly queryFailures: Counter<string>;

  constructor(opts: PromRecorderOptions = {}) {
    this.now = opts.now ?? Date.now;
    const registers = [this.registry];
    const sets = this.sets;
    const now = this.now;
    this.phase = new Gauge({ name: "claimstep_set_phase", help: "1 for the set's current phase and reason (one series per set).", labelNames: ["namespace", "name", "phase", "reason"], registers });
    this.ordinals = new Gauge({ name: "claimstep_set_ordinals", help: "The set's ordinals by state (updated, in_flight, pending, blocked).", labelNames: ["namespace", "name", "state"], registers });
    this.phaseAge = new Gauge({
      name: "claimstep_set_phase_age_seconds",
      help: "Seconds since the set's phase or reason last changed (status.since).",
      labelNames: ["namespace", "name"],
      registers,
      collect() {
        const t = now();
        for (const s of sets.values()) if (s.sinceMs !== undefined) this.set({ namespace: s.ref.namespace, name: s.ref.name }, Math.max(0, (t - s.sinceMs) / 1000));
      },
    });
    this.requested = new Gauge({ name: "claimstep_set_requested_bytes", help: "The smallest storage request among the set's claims of the template.", labelNames: ["namespace", "name", "template"], registers });
    this.desired = new Gauge({ name: "claimstep_set_desired_bytes", help: "The desired template's storage request.", labelNames: ["namespace", "name", "template"], registers });
    this.info = new Gauge({ name: "claimstep_set_info", help: "1 per opted-in set: whether it asks for autogrow, and its update strategy.", labelNames: ["namespace", "name", "autogrow", "strategy"], registers });
    this.claimInfo = new Gauge({
      name: "claimstep_claim_info",
      help: "1 per claim of a set claimstep steps (joins kubelet_volume_stats_* to its set).",
      labelNames: ["namespace", "persistentvolumeclaim", "statefulset", "autogrow"],
      registers,
    });
    this.threshold = new Gauge({ name: "claimstep_autogrow_threshold_ratio", help: "The set's autogrow threshold as a ratio of capacity.", labelNames: ["namespace", "name"], registers });
    this.steps = new Counter({ name: "claimstep_steps_total", help: "Steps that finished, by outcome.", labelNames: ["outcome"], registers });
    this.stepSeconds = new Histogram({ name: "claimstep_step_duration_seconds", help: "Duration of a step (read, plan, write, record), failed ones included.", buckets: STEP_BUCKETS, registers });
    this.apiRequests = new Counter({ name: "claimstep_api_requests_total", help: "Requests to the Kubernetes API server, by verb, resource and status code (error: no answer).", labelNames: ["verb", "resource", "code"], registers });
    this.apiSeconds = new Histogram({ name: "claimstep_api_request_duration_seconds", help: "Duration of one request to the Kubernetes API server.", labelNames: ["verb", "resource"], buckets: API_BUCKETS, registers });
    this.deliveries = new Counter({ name: "claimstep_webhook_deliveries_total", help: "Inbound deliveries (relay events, forge webhooks, step requests), by source and result.", labelNames: ["source", "result"], registers });
    this.admissions = new Counter({ name: "claimstep_admission_reviews_total", help: "Admission reviews answered, by result.", labelNames: ["result"], registers });
    const holds = () => this.holdsLease();
    new Gauge({
      name: "claimstep_lease_holder",
      help: "1 on the replica that sweeps (holds the Lease, or sweeps alone), else 0.",
      registers,
      collect() {
        this.set(holds() ? 1 : 0);
      },
    });
    this.growths = new Counter({ name: "claimstep_autogrow_growths_total", help: "Template raises made (or proposed) by autogrow.", labelNames: ["namespace", "name"], registers });
    this.queryFailures = new Counter({ name: "claimstep_prometheus_query_failures_total", help: "Autogrow's Prometheus queries that failed.", registers });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** claimstep_lease_holder asks this at every scrape. */
  sweeps(holds: () => boolean): void {
    this.holdsLease = holds;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  step(r: StepRecord): void {
    this.steps.inc({ outcome: r.outcome });
    this.stepSeconds.observe(r.seconds);
    if (r.set) this.observe(r.ref, r.set);
    if (r.grew) {
      this.growths.inc({ namespace: r.ref.namespace, name: r.ref.name });
      this.series(r.ref).growths = true;
    }
  }

  stepFailed(seconds: number): void {
    this.stepSeconds.observe(seconds);
  }

  apiRequest(r: ApiRequestRecord): void {
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.code) });
    this.apiSeconds.observe({ verb: r.verb, resource: r.resource }, r.seconds);
  }

  delivery(source: DeliverySource, result: DeliveryResult): void {
    this.deliveries.inc({ source, result });
  }

  admissionReview(result: AdmissionResult): void {
    this.admissions.inc({ result });
  }

  prometheusQueryFailed(): void {
    this.queryFailures.inc();
  }

  setGone(ref: SetRef): void {
    const s = this.sets.get(keyOf(ref));
    if (!s) return;
    this.sets.delete(keyOf(ref));
    const set = { namespace: ref.namespace, name: ref.name };
    if (s.phase) this.phase.remove(s.phase);
    for (const [state] of STATES) this.ordinals.remove({ ...set, state });
    this.phaseAge.remove(set);
    for (const template of s.templates) {
      this.requested.remove({ ...set, template });
      this.desired.remove({ ...set, template });
    }
    if (s.info) this.info.remove(s.info);
    for (const c of s.claims) this.claimInfo.remove(c);
    if (s.threshold) this.threshold.remove(set);
    if (s.growths) this.growths.remove(set);
  }

  setsListed(namespace: string | undefined, refs: readonly SetRef[]): void {
    const listed = new Set(refs.map(keyOf));
    for (const [key, s] of [...this.sets]) {
      if ((namespace === undefined || s.ref.namespace === namespace) && !listed.has(key)) this.setGone(s.ref);
    }
  }

  /** Sets with series (for tests and the benchmark). */
  get setCount(): number {
    return this.sets.size;
  }

  private series(ref: SetRef): SetSeries {
    const key = keyOf(ref);
    let s = this.sets.get(key);
    if (!s) this.sets.set(key, (s = { ref: { namespace: ref.namespace, name: ref.name }, templates: [], claims: [], threshold: false, growths: false }));
    return s;
  }

  private observe(ref: SetRef, o: SetObservation): void {
    // A set that opted out (or never opted in) has no series.
    if (o.phase === "Idle" && o.reason === "NotOptedIn") return this.setGone(ref);
    const s = this.series(ref);
    const set = { namespace: ref.namespace, name: ref.name };

    const phase = { ...set, phase: o.phase, reason: o.reason };
    if (s.phase && (s.phase.phase !== phase.phase || s.phase.reason !== phase.reason)) this.phase.remove(s.phase);
    this.phase.set(phase, 1);
    s.phase = phase;

    for (const [state, field] of STATES) this.ordinals.set({ ...set, state }, o.counts[field]);
    s.sinceMs = o.sinceMs;

    const templates = o.templates.map((t) => t.template);
    for (const template of s.templates) {
      if (templates.includes(template)) continue;
      this.requested.remove({ ...set, template });
      this.desired.remove({ ...set, template });
    }
    for (const t of o.templates) {
      if (t.requestedBytes !== undefined) this.requested.set({ ...set, template: t.template }, t.requestedBytes);
      else this.requested.remove({ ...set, template: t.template });
      if (t.desiredBytes !== undefined) this.desired.set({ ...set, template: t.template }, t.desiredBytes);
      else this.desired.remove({ ...set, template: t.template });
    }
    s.templates = templates;

    const autogrow = o.autogrow ? "true" : "false";
    const info = { ...set, autogrow, strategy: o.strategy };
    if (s.info && (s.info.autogrow !== autogrow || s.info.strategy !== o.strategy)) this.info.remove(s.info);
    this.info.set(info, 1);
    s.info = info;

    const claims = o.claims.map((c) => ({ namespace: ref.namespace, persistentvolumeclaim: c, statefulset: ref.name, autogrow }));
    const now = new Set(claims.map((c) => `${c.persistentvolumeclaim}\u0000${c.autogrow}`));
    for (const c of s.claims) if (!now.has(`${c.persistentvolumeclaim}\u0000${c.autogrow}`)) this.claimInfo.remove(c);
    for (const c of claims) this.claimInfo.set(c, 1);
    s.claims = claims;

    if (o.thresholdRatio !== undefined) this.threshold.set(set, o.thresholdRatio);
    else if (s.threshold) this.threshold.remove(set);
    s.threshold = o.thresholdRatio !== undefined;
  }
}
