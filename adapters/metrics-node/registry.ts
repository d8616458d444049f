// The Node server's recorder (core/view/recorder.ts) on prom-client: the series of docs/operating.md
// "Metrics", in a registry of its own, exposed by GET /metrics. Node only: the Worker never loads
// this file (prom-client needs Node). Not to be confused with ./prometheus.ts, autogrow's
// Prometheus query client.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { SetRef } from "../../core/types.js";
import type {
  AdmissionResult,
  ApiRequestRecord,
  DeliveryResult,
  DeliverySource,
  Recorder,
  SetObservation,
  StepRecord,
} from "../../core/view/index.js";

/** Step durations: a converged set's step takes milliseconds, an acting one a few requests, a slow API server seconds. */
export const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** One API request: the client's timeout is 10 s. */
export const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A label value as the exposition format writes it. */
const esc = (v: string) =>
  /[\\"\n]/.test(v) ? v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : v;

/**
 * The per-set gauges, by family: written by hand, not by prom-client. prom-client formats every
 * series at every scrape (about 40 ms per 1,000 series on this machine); a set's lines here are
 * built once per step that changes them, and a scrape joins them (docs/benchmarks.md, B9).
 */
const SET_FAMILIES = [
  ["claimstep_set_phase", "1 for the set's current phase and reason (one series per set)."],
  ["claimstep_set_ordinals", "The set's ordinals by state (updated, in_flight, pending, blocked)."],
  ["claimstep_set_phase_age_seconds", "Seconds since the set's phase or reason last changed (status.since)."],
  ["claimstep_set_requested_bytes", "The smallest storage request among the set's claims of the template."],
  ["claimstep_set_desired_bytes", "The desired template's storage request."],
  ["claimstep_set_info", "1 per opted-in set: whether it asks for autogrow, and its update strategy."],
  ["claimstep_claim_info", "1 per claim of a set claimstep steps (joins kubelet_volume_stats_* to its set)."],
  ["claimstep_autogrow_threshold_ratio", "The set's autogrow threshold as a ratio of capacity."],
] as const;
type SetFamily = (typeof SET_FAMILIES)[number][0];

/** A set's exposition lines by family (the phase age is written at the scrape, from sinceMs). */
interface SetSeries {
  ref: SetRef;
  /** `namespace="…",name="…"`, escaped. */
  labels: string;
  sinceMs: number;
  lines: Partial<Record<SetFamily, string>>;
  /** The claims' lines' key (names and autogrow): unchanged, they are not rebuilt. */
  claimsKey?: string;
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
    this.steps = new Counter({
      name: "claimstep_steps_total",
      help: "Steps that finished, by outcome.",
      labelNames: ["outcome"],
      registers,
    });
    this.stepSeconds = new Histogram({
      name: "claimstep_step_duration_seconds",
      help: "Duration of a step (read, plan, write, record), failed ones included.",
      buckets: STEP_BUCKETS,
      registers,
    });
    this.apiRequests = new Counter({
      name: "claimstep_api_requests_total",
      help: "Requests to the Kubernetes API server, by verb, resource and status code (error: no answer).",
      labelNames: ["verb", "resource", "code"],
      registers,
    });
    this.apiSeconds = new Histogram({
      name: "claimstep_api_request_duration_seconds",
      help: "Duration of one request to the Kubernetes API server.",
      labelNames: ["verb", "resource"],
      buckets: API_BUCKETS,
      registers,
    });
    this.deliveries = new Counter({
      name: "claimstep_webhook_deliveries_total",
      help: "Inbound deliveries (relay events, forge webhooks, step requests), by source and result.",
      labelNames: ["source", "result"],
      registers,
    });
    this.admissions = new Counter({
      name: "claimstep_admission_reviews_total",
      help: "Admission reviews answered, by result.",
      labelNames: ["result"],
      registers,
    });
    const holds = () => this.holdsLease();
    new Gauge({
      name: "claimstep_lease_holder",
      help: "1 on the replica that sweeps (holds the Lease, or sweeps alone), else 0.",
      registers,
      collect() {
        this.set(holds() ? 1 : 0);
      },
    });
    this.growths = new Counter({
      name: "claimstep_autogrow_growths_total",
      help: "Template raises made (or proposed) by autogrow.",
      labelNames: ["namespace", "name"],
      registers,
    });
    this.queryFailures = new Counter({
      name: "claimstep_prometheus_query_failures_total",
      help: "Autogrow's Prometheus queries that failed.",
      registers,
    });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** claimstep_lease_holder asks this at every scrape. */
  sweeps(holds: () => boolean): void {
    this.holdsLease = holds;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text: prom-client's metrics, then the per-set families. */
  async metrics(): Promise<string> {
    return `${await this.registry.metrics()}${this.setFamilies()}`;
  }

  private setFamilies(): string {
    const now = this.now();
    let out = "";
    for (const [family, help] of SET_FAMILIES) {
      out += `# HELP ${family} ${help}\n# TYPE ${family} gauge\n`;
      if (family === "claimstep_set_phase_age_seconds") {
        for (const s of this.sets.values()) out += `${family}{${s.labels}} ${Math.max(0, (now - s.sinceMs) / 1000)}\n`;
      } else {
        for (const s of this.sets.values()) out += s.lines[family] ?? "";
      }
    }
    return out;
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

  /** An arrow: KubeClient's onRequest hook as it is. */
  readonly apiRequest = (r: ApiRequestRecord): void => {
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.code) });
    this.apiSeconds.observe({ verb: r.verb, resource: r.resource }, r.seconds);
  };

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
    if (s.growths) this.growths.remove({ namespace: ref.namespace, name: ref.name });
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
    if (!s)
      this.sets.set(
        key,
        (s = {
          ref: { namespace: ref.namespace, name: ref.name },
          labels: `namespace="${esc(ref.namespace)}",name="${esc(ref.name)}"`,
          sinceMs: this.now(),
          lines: {},
          growths: false,
        }),
      );
    return s;
  }

  private observe(ref: SetRef, o: SetObservation): void {
    // A set that opted out (or never opted in) has no series.
    if (o.phase === "Idle" && o.reason === "NotOptedIn") {
      this.setGone(ref);
      return;
    }
    const s = this.series(ref);
    const l = s.labels;
    const { lines } = s;
    lines.claimstep_set_phase = `claimstep_set_phase{${l},phase="${esc(o.phase)}",reason="${esc(o.reason)}"} 1\n`;
    const c = o.counts;
    lines.claimstep_set_ordinals =
      `claimstep_set_ordinals{${l},state="updated"} ${c.updated}\nclaimstep_set_ordinals{${l},state="in_flight"} ${c.inFlight}\n` +
      `claimstep_set_ordinals{${l},state="pending"} ${c.pending}\nclaimstep_set_ordinals{${l},state="blocked"} ${c.blocked}\n`;
    s.sinceMs = o.sinceMs;
    let requested = "";
    let desired = "";
    for (const t of o.templates) {
      const tl = `${l},template="${esc(t.template)}"`;
      if (t.requestedBytes !== undefined) requested += `claimstep_set_requested_bytes{${tl}} ${t.requestedBytes}\n`;
      if (t.desiredBytes !== undefined) desired += `claimstep_set_desired_bytes{${tl}} ${t.desiredBytes}\n`;
    }
    lines.claimstep_set_requested_bytes = requested;
    lines.claimstep_set_desired_bytes = desired;
    const autogrow = o.autogrow ? "true" : "false";
    lines.claimstep_set_info = `claimstep_set_info{${l},autogrow="${autogrow}",strategy="${esc(o.strategy)}"} 1\n`;
    const claimsKey = `${autogrow}\u0000${o.claims.join("\u0000")}`;
    if (claimsKey !== s.claimsKey) {
      const ns = esc(ref.namespace);
      const set = esc(ref.name);
      let claims = "";
      for (const claim of o.claims)
        claims += `claimstep_claim_info{namespace="${ns}",persistentvolumeclaim="${esc(claim)}",statefulset="${set}",autogrow="${autogrow}"} 1\n`;
      lines.claimstep_claim_info = claims;
      s.claimsKey = claimsKey;
    }
    lines.claimstep_autogrow_threshold_ratio =
      o.thresholdRatio !== undefined ? `claimstep_autogrow_threshold_ratio{${l}} ${o.thresholdRatio}\n` : "";
  }
}
