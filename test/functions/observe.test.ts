// The Worker's events (functions/observe.ts): the log line and the Analytics Engine data point
// each event maps to (docs/observability-workers.md), and where the Worker observes them: its
// subrequests (API calls, Prometheus), its steps, its inbound deliveries.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../adapters/api-error.js";
import { KubeClient } from "../../adapters/kube/client.js";
import { Routes } from "../../adapters/kube/routes.js";
import * as z from "../../core/zod.js";
import {
  BLOB_MAX_BYTES,
  dataPoint,
  deliveryOf,
  EVENT_SCHEMA,
  eventSink,
  INDEX_MAX_BYTES,
  logLine,
  type ObservedEvent,
  observeStep,
  observing,
  stepOutcomeOf,
} from "../../functions/observe.js";
import type { StepResult } from "../../functions/step.js";

const bytes = (s: string) => new TextEncoder().encode(s).length;

const step: ObservedEvent = {
  event: "step",
  cluster: "eu-1",
  namespace: "default",
  name: "web",
  outcome: "applied",
  phase: "Progressing",
  reason: "ClaimUpdated",
  durationSeconds: 0.25,
};

/** An Analytics Engine binding that keeps what it is given. */
const recording = () => {
  const points: { blobs?: string[]; doubles?: number[]; indexes?: string[] }[] = [];
  return { points, writeDataPoint: (p: (typeof points)[number]) => void points.push(structuredClone(p)) };
};

describe("the log line", () => {
  it("carries the schema version, the event and its fields, one JSON object", () => {
    expect(EVENT_SCHEMA).toBe("claimstep.event.v1");
    expect(logLine(step)).toEqual({ schema: "claimstep.event.v1", ...step });
    const api = logLine({
      event: "api_request",
      verb: "patch",
      resource: "persistentvolumeclaims",
      code: "409",
      durationSeconds: 0.01,
    });
    expect(api).toEqual({
      schema: "claimstep.event.v1",
      event: "api_request",
      verb: "patch",
      resource: "persistentvolumeclaims",
      code: "409",
      durationSeconds: 0.01,
    });
  });

  it("bounds every string field", () => {
    const line = logLine({ ...step, name: "n".repeat(5000), reason: "é".repeat(5000) });
    expect(bytes(line.name as string)).toBeLessThanOrEqual(BLOB_MAX_BYTES);
    expect(bytes(line.reason as string)).toBeLessThanOrEqual(BLOB_MAX_BYTES);
  });
});

describe("the data point", () => {
  it("puts each field at its documented position", () => {
    expect(dataPoint(step)).toEqual({
      indexes: ["eu-1/default/web"],
      blobs: ["step", "eu-1", "default", "web", "applied", "Progressing", "ClaimUpdated", "", "", "", ""],
      doubles: [0.25, 1],
    });
    expect(
      dataPoint({ event: "api_request", verb: "get", resource: "statefulsets", code: "200", durationSeconds: 0.5 }),
    ).toEqual({
      indexes: ["api_request"],
      blobs: ["api_request", "", "", "", "", "", "", "get", "statefulsets", "200", ""],
      doubles: [0.5, 1],
    });
    expect(dataPoint({ event: "delivery", source: "relay", result: "replayed", code: "401" }).blobs).toEqual([
      "delivery",
      "",
      "",
      "",
      "replayed",
      "",
      "",
      "",
      "",
      "401",
      "relay",
    ]);
  });

  it("keeps blobs and the index within Analytics Engine's limits", () => {
    const p = dataPoint({
      ...step,
      cluster: "c".repeat(300),
      namespace: "n".repeat(300),
      name: "ü".repeat(300),
      reason: "r".repeat(20_000),
    });
    expect(bytes(p.indexes[0]!)).toBeLessThanOrEqual(INDEX_MAX_BYTES);
    for (const b of p.blobs) expect(bytes(b)).toBeLessThanOrEqual(BLOB_MAX_BYTES);
    expect(p.blobs.reduce((n, b) => n + bytes(b), 0)).toBeLessThanOrEqual(16 * 1024);
    expect(p.blobs.length).toBeLessThanOrEqual(20);
    expect(p.doubles.length).toBeLessThanOrEqual(20);
  });
});

describe("the recorder", () => {
  it("logs one line per event and writes a data point when the binding is configured", () => {
    const lines: string[] = [];
    const dataset = recording();
    const record = eventSink({ CLAIMSTEP_ANALYTICS: dataset }, (l) => lines.push(l));
    record(step);
    expect(lines.map((l) => JSON.parse(l))).toEqual([{ schema: "claimstep.event.v1", ...step }]);
    expect(dataset.points).toEqual([dataPoint(step)]);
  });

  it("a CLAIMSTEP_ANALYTICS that is not a dataset binding (a var, a KV namespace) is a clear log line; the events still go to the log", () => {
    for (const wrong of ["claimstep", { get: () => null }]) {
      const lines: string[] = [];
      eventSink({ CLAIMSTEP_ANALYTICS: wrong }, (l) => lines.push(l))(step);
      expect(lines.map((l) => JSON.parse(l))).toEqual([
        {
          msg: "configuration error",
          error:
            'CLAIMSTEP_ANALYTICS is not a Workers Analytics Engine dataset: bind it under [[analytics_engine_datasets]] in wrangler.toml (binding = "CLAIMSTEP_ANALYTICS"), or remove it; events go to the log only',
        },
        { schema: "claimstep.event.v1", ...step },
      ]);
    }
  });

  it("only logs without the binding, and a failing binding never fails the event", () => {
    const lines: string[] = [];
    eventSink({}, (l) => lines.push(l))(step);
    expect(lines).toHaveLength(1);
    const broken = {
      writeDataPoint: () => {
        throw new Error("dataset gone");
      },
    };
    eventSink({ CLAIMSTEP_ANALYTICS: broken }, (l) => lines.push(l))(step);
    expect(lines).toHaveLength(2);
  });
});

describe("API calls and Prometheus queries", () => {
  it("each request of the Kubernetes client (its onRequest hook) is an api_request with its RBAC verb, resource and code", async () => {
    const events: ObservedEvent[] = [];
    const answers = [
      new Response("{}", { status: 200 }),
      new Response(JSON.stringify({ kind: "Status", code: 404, reason: "NotFound" }), { status: 404 }),
    ];
    const client = new KubeClient({
      server: "https://kube.example.com",
      fetch: async () => answers.shift()!,
      onRequest: observing((e) => events.push(e), "eu-1").onRequest,
    });
    await client.get(Routes.getStatefulSet, { namespace: "default", name: "web" }, z.unknown());
    await expect(
      client.get(Routes.getStatefulSet, { namespace: "default", name: "gone" }, z.unknown()),
    ).rejects.toThrow();
    expect(
      events.map(({ durationSeconds, ...e }: any) => (expect(durationSeconds).toBeGreaterThanOrEqual(0), e)),
    ).toEqual([
      { cluster: "eu-1", event: "api_request", verb: "get", resource: "statefulsets", code: "200" },
      { cluster: "eu-1", event: "api_request", verb: "get", resource: "statefulsets", code: "404" },
    ]);
  });

  it("a reading of autogrow's metrics that is not ok is a prometheus_query_failure; the reading is passed through", async () => {
    const events: ObservedEvent[] = [];
    const readings = [
      { ok: true as const, volumes: [] },
      { ok: false as const, message: "Prometheus answered 503" },
    ];
    const metrics = observing((e) => events.push(e)).wrapMetrics({ usage: async () => readings.shift()! });
    expect(await metrics.usage({ namespace: "default", name: "web" }, [])).toEqual({ ok: true, volumes: [] });
    expect(await metrics.usage({ namespace: "default", name: "web" }, [])).toEqual({
      ok: false,
      message: "Prometheus answered 503",
    });
    expect(events).toEqual([{ event: "prometheus_query_failure" }]);
  });
});

describe("steps", () => {
  const result = (kind: string, phase = "Progressing", action?: string): StepResult =>
    ({
      decision: { phase, reason: "R", ...(action ? { action: { type: action } } : {}) },
      outcome: { kind },
      writer: "direct",
    }) as unknown as StepResult;

  it("maps a step's result to the contract's outcomes", () => {
    expect(stepOutcomeOf(result("applied"))).toBe("applied");
    expect(stepOutcomeOf(result("proposed"))).toBe("proposed");
    expect(stepOutcomeOf(result("refused"))).toBe("refused");
    expect(stepOutcomeOf(result("retry"))).toBe("retried");
    expect(stepOutcomeOf(result("none", "Complete"))).toBe("complete");
    expect(stepOutcomeOf(result("none", "Idle"))).toBe("idle");
    expect(stepOutcomeOf(result("none", "Waiting"))).toBe("waiting");
    expect(stepOutcomeOf(result("none", "Blocked"))).toBe("refused");
  });

  it("records the step with its set and duration, an autogrow raise as a growth, and a thrown step as an error", async () => {
    const events: ObservedEvent[] = [];
    const ref = { namespace: "default", name: "web" };
    const r = await observeStep(
      (e) => events.push(e),
      ref,
      async () => result("applied", "Progressing", "RaiseTemplate"),
      "eu-1",
    );
    expect(r.outcome.kind).toBe("applied");
    await expect(
      observeStep(
        (e) => events.push(e),
        ref,
        async () => Promise.reject(new ApiError(403, "Forbidden", "no", undefined, undefined, "get statefulsets")),
      ),
    ).rejects.toThrow("no");
    expect(events.map(({ durationSeconds: _, ...e }: any) => e)).toEqual([
      {
        event: "step",
        cluster: "eu-1",
        namespace: "default",
        name: "web",
        outcome: "applied",
        phase: "Progressing",
        reason: "R",
      },
      { event: "autogrow_growth", cluster: "eu-1", namespace: "default", name: "web" },
      { event: "step", namespace: "default", name: "web", outcome: "error", phase: "", reason: "Forbidden" },
    ]);
  });
  it("a step's phase is Complete only when nothing is left to do (issue 33: a re-create or a restart still due is Progressing)", async () => {
    const events: ObservedEvent[] = [];
    const ref = { namespace: "default", name: "web" };
    const complete = (extra: object) =>
      ({
        decision: { phase: "Complete", reason: "RolloutComplete", ...extra },
        outcome: { kind: "none" },
        writer: "direct",
      }) as unknown as StepResult;
    await observeStep(
      (e) => events.push(e),
      ref,
      async () => complete({ requeueAfter: 2 }),
    );
    await observeStep(
      (e) => events.push(e),
      ref,
      async () => complete({ action: { type: "DeleteRecord" } }),
    );
    await observeStep(
      (e) => events.push(e),
      ref,
      async () => complete({}),
    );
    expect(events.map((e: any) => e.phase)).toEqual(["Progressing", "Progressing", "Complete"]);
  });
});

describe("deliveries", () => {
  const res = (status: number, body: unknown = {}) => Response.json(body, { status });

  it("classifies the relay's, the forges' and the API's requests by their answer", async () => {
    expect(await deliveryOf(new Request("https://w/v1/relay", { method: "POST" }), res(200))).toEqual({
      event: "delivery",
      source: "relay",
      result: "accepted",
      code: "200",
    });
    expect(
      await deliveryOf(new Request("https://w/v1/relay", { method: "POST" }), res(401, { failure: "Replayed" })),
    ).toEqual({ event: "delivery", source: "relay", result: "replayed", code: "401" });
    expect(
      await deliveryOf(new Request("https://w/v1/relay", { method: "POST" }), res(401, { failure: "BadSignature" })),
    ).toEqual({ event: "delivery", source: "relay", result: "refused", code: "401" });
    expect(
      await deliveryOf(new Request("https://w/v1/webhooks/github", { method: "POST" }), res(202, { ignored: "x" })),
    ).toEqual({ event: "delivery", source: "github", result: "ignored", code: "202" });
    expect(
      await deliveryOf(new Request("https://w/v1/clusters/eu-1/webhooks/gitlab", { method: "POST" }), res(403)),
    ).toEqual({ event: "delivery", cluster: "eu-1", source: "gitlab", result: "refused", code: "403" });
    expect(await deliveryOf(new Request("https://w/v1/steps", { method: "POST" }), res(503))).toEqual({
      event: "delivery",
      source: "api",
      result: "refused",
      code: "503",
    });
    // The step ran and hit a transient failure: delivered (the Node server counts it so too).
    expect(
      await deliveryOf(new Request("https://w/v1/steps", { method: "POST" }), res(503, { decision: {} })),
    ).toMatchObject({ source: "api", result: "accepted" });
    expect(
      await deliveryOf(new Request("https://w/v1/statefulsets/default/web/templates", { method: "POST" }), res(200)),
    ).toMatchObject({ source: "api", result: "accepted" });
    expect(await deliveryOf(new Request("https://w/v1/statefulsets/default/web"), res(200))).toBeUndefined();
    expect(await deliveryOf(new Request("https://w/healthz"), res(200))).toBeUndefined();
  });

  it("classifies admission reviews: patched, allowed, error", async () => {
    const review = (response: unknown, status = 200) =>
      deliveryOf(new Request("https://w/v1/admission/statefulsets", { method: "POST" }), res(status, { response }));
    expect(await review({ allowed: true, patch: "W10=" })).toEqual({
      event: "admission_review",
      result: "patched",
      code: "200",
    });
    expect(await review({ allowed: true })).toMatchObject({ result: "allowed" });
    expect(await review({ allowed: false })).toMatchObject({ result: "error" });
    expect(await review(undefined, 400)).toMatchObject({ result: "error", code: "400" });
  });

  it("counts the namespace entry of the webhook (POST …/by-namespace) as an admission review too", async () => {
    const byNamespace = new Request("https://w/v1/admission/statefulsets/by-namespace", { method: "POST" });
    expect(await deliveryOf(byNamespace, res(200, { response: { allowed: true } }))).toMatchObject({
      event: "admission_review",
      result: "allowed",
    });
  });

  it("leaves the answer's body readable", async () => {
    const answer = res(401, { failure: "Replayed" });
    await deliveryOf(new Request("https://w/v1/relay", { method: "POST" }), answer);
    expect(((await answer.json()) as any).failure).toBe("Replayed");
  });
});

describe("no secrets", () => {
  it("a line or data point holds only the event's own fields: no token, header or query string", async () => {
    const lines: string[] = [];
    const dataset = recording();
    const record = eventSink({ CLAIMSTEP_ANALYTICS: dataset, KUBE_TOKEN: "kube-secret-token" }, (l) => lines.push(l));
    const client = new KubeClient({
      server: "https://kube.example.com",
      fetch: async () => new Response(JSON.stringify({ items: [], metadata: {} })),
      headers: { Authorization: "Bearer header-secret" },
      onRequest: observing(record).onRequest,
    });
    await client.list(Routes.listPods, { namespace: "default" }, z.unknown(), { labelSelector: "query-secret" });
    const all = JSON.stringify([lines, dataset.points]);
    expect(lines).toHaveLength(1);
    for (const secret of ["kube-secret-token", "query-secret", "header-secret", "Bearer"])
      expect(all).not.toContain(secret);
  });
});
