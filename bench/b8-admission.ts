// B8: the admission webhook (issue 23). It adds latency to every StatefulSet update the API server
// sends it, so: one review handled as the route handles it (depth check, JSON.parse, the core's
// decision, the JSONPatch encoded, the response serialised), as a ratio to JSON.parse of the same
// review, measured side by side; and the per-review latency distribution over 10,000 reviews
// through the Hono route on Node (p50/p99/max), against the API server's timeout (5 s shipped).
// Side by side with the captured ones, hostile reviews of the smallest templates (issue 37): one at
// ADMISSION_CAPS (answered in full: the comparisons run) and one of 20,000 + 20,000 (refused by the
// caps before any template is read; 3.6 s over HTTP before them).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ADMISSION_CAPS, admitStatefulSetUpdate } from "../core/change/admission.js";
import { admissionResponse, admissionRoutes, jsonDepth } from "../functions/routes/admission.js";
import { compare, formatMs, keep, type Measured, median, percentile, ratio } from "./harness.js";

export interface B8Case {
  label: string;
  bytes: number;
  handle: Measured;
  parse: Measured;
  ratio: number;
}

export interface B8Result {
  cases: B8Case[];
  /** Through the Hono route (app.fetch, Request in, Response read), 10,000 reviews one after another. */
  route: { reviews: number; p50Ms: number; p99Ms: number; maxMs: number; timeoutSeconds: number };
}

const FIXTURE = fileURLToPath(
  new URL("../test/fixtures/apiserver/admission-review-sts-update-vct-1.34.json", import.meta.url),
);

/** The captured review, opted in; `templates` claim templates and a last-applied annotation of the set's size. */
function reviewOf(templates: number): string {
  const r = JSON.parse(readFileSync(FIXTURE, "utf8"));
  r.request.object.metadata.labels = { ...r.request.object.metadata.labels, "claimstep.io/admission": "enabled" };
  const one = r.request.object.spec.volumeClaimTemplates[0];
  const oldOne = r.request.oldObject.spec.volumeClaimTemplates[0];
  r.request.object.spec.volumeClaimTemplates = Array.from({ length: templates }, (_, i) => ({
    ...structuredClone(one),
    metadata: { name: i ? `t${i}` : "data" },
  }));
  r.request.oldObject.spec.volumeClaimTemplates = Array.from({ length: templates }, (_, i) => ({
    ...structuredClone(oldOne),
    metadata: { name: i ? `t${i}` : "data" },
  }));
  const applied = JSON.stringify({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: r.request.object.metadata,
    spec: r.request.object.spec,
  });
  r.request.object.metadata.annotations = {
    ...r.request.object.metadata.annotations,
    "kubectl.kubernetes.io/last-applied-configuration": applied,
  };
  r.request.oldObject.metadata.annotations = {
    ...r.request.oldObject.metadata.annotations,
    "kubectl.kubernetes.io/last-applied-configuration": applied,
  };
  return JSON.stringify(r);
}

/** The captured review, opted in, with `templates` and `stored` of the smallest templates (one access mode, a storage request) instead. */
function hostileReviewOf(templates: number, stored: number): string {
  const r = JSON.parse(readFileSync(FIXTURE, "utf8"));
  r.request.object.metadata.labels = { ...r.request.object.metadata.labels, "claimstep.io/admission": "enabled" };
  const smallest = (name: string, storage: string) => ({
    metadata: { name },
    spec: { accessModes: ["ReadOnlyMany"], resources: { requests: { storage } } },
  });
  r.request.object.spec.volumeClaimTemplates = Array.from({ length: templates }, (_, i) => smallest(`n${i}`, "2Gi"));
  r.request.oldObject.spec.volumeClaimTemplates = Array.from({ length: stored }, (_, i) => smallest(`t${i}`, "1Gi"));
  return JSON.stringify(r);
}

/** What the route does with the body, without HTTP. */
function handle(text: string): string {
  if (jsonDepth(text, 64) > 64) throw new Error("too deep");
  return JSON.stringify(admissionResponse(admitStatefulSetUpdate(JSON.parse(text))));
}

export async function runB8(log: (line: string) => void, reviews = 10_000): Promise<B8Result> {
  const cases: B8Case[] = [];
  const atCaps = `hostile, at the caps: ${ADMISSION_CAPS.templates.toLocaleString("en")} + ${ADMISSION_CAPS.storedTemplates.toLocaleString("en")} smallest templates (refused: over 256 KiB once written)`;
  const overCaps = "hostile, over the caps: 20,000 + 20,000 smallest templates (refused by the caps)";
  for (const [label, text, answer] of [
    ["the captured v1.34 review (1 template)", reviewOf(1), /"patch"/],
    ["3 templates", reviewOf(3), /"patch"/],
    ["10 templates", reviewOf(10), /"patch"/],
    [atCaps, hostileReviewOf(ADMISSION_CAPS.templates, ADMISSION_CAPS.storedTemplates), /over Kubernetes' limit/],
    [overCaps, hostileReviewOf(20_000, 20_000), /over claimstep's cap/],
  ] as const) {
    if (!answer.test(handle(text)))
      throw new Error(`B8 ${label}: the review got another answer: the benchmark would measure the wrong path`);
    const m = compare({ handle: () => handle(text), parse: () => JSON.parse(text) });
    cases.push({
      label,
      bytes: Buffer.byteLength(text),
      handle: m.handle,
      parse: m.parse,
      ratio: ratio(m.handle.wall.median, m.parse.wall.median),
    });
    log(
      `  B8 ${label}: ${formatMs(m.handle.wall.median)} vs JSON.parse ${formatMs(m.parse.wall.median)} (${(m.handle.wall.median / m.parse.wall.median).toFixed(1)}×)`,
    );
  }

  const app = admissionRoutes();
  const body = reviewOf(1);
  const times: number[] = [];
  for (let i = 0; i < 500; i++) await (await app.fetch(request(body))).text(); // warm-up
  for (let i = 0; i < reviews; i++) {
    const t0 = performance.now();
    const res = await app.fetch(request(body));
    keep(await res.text());
    times.push(performance.now() - t0);
  }
  const route = {
    reviews,
    p50Ms: median(times),
    p99Ms: percentile(times, 99),
    maxMs: Math.max(...times),
    timeoutSeconds: 5,
  };
  log(
    `  B8 route: ${reviews} reviews, p50 ${formatMs(route.p50Ms)}, p99 ${formatMs(route.p99Ms)}, max ${formatMs(route.maxMs)}`,
  );
  return { cases, route };
}

const request = (body: string) =>
  new Request("http://claimstep.test/v1/admission/statefulsets?timeout=5s", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
