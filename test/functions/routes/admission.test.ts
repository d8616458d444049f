// POST /v1/admission/statefulsets through the whole app (as the Node server and the Worker serve
// it): the real reviews of test/fixtures/apiserver/, and bad ones — never a 500, never a patch that
// drops a change silently, nothing read from or written to the cluster.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBase64 } from "../../../adapters/gitops/base64.js";
import { ADMISSION_LABEL } from "../../../core/change/admission.js";
import { Keys } from "../../../core/keys.js";
import { createApp } from "../../../functions/app.js";
import { ADMISSION_BODY_LIMIT, jsonDepth } from "../../../functions/routes/admission.js";
import { fixtureJson } from "../../fixtures/apiserver.js";

const calls: string[] = [];
const app = createApp({
  reader: {
    load: async () => (calls.push("load"), Promise.reject(new Error("the webhook must not read the cluster"))),
  },
  writers: new Proxy({} as any, { get: (_t, k) => (calls.push(`writers.${String(k)}`), undefined) }),
  auth: { bearerTokens: ["t-0123456789abcdef"], webhookSecrets: [] } as any,
  now: () => new Date("2026-12-01T00:00:00Z"),
});

const review = (change: (r: any) => void = () => {}) => {
  const r = structuredClone(fixtureJson("admission-review-sts-update-vct-1.34.json"));
  r.request.object.metadata.labels = { ...r.request.object.metadata.labels, [ADMISSION_LABEL]: "enabled" };
  change(r);
  return r;
};
const post = (
  body: unknown,
  headers: Record<string, string> = { "content-type": "application/json" },
  query = "?timeout=5s",
) =>
  app.request(`/v1/admission/statefulsets${query}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("POST /v1/admission/statefulsets", () => {
  it("answers the v1.34 review with a JSONPatch (base64) and claimstep's warning, no bearer token needed", async () => {
    const r = review();
    const res = await post(r);
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body).toMatchObject({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: r.request.uid, allowed: true, patchType: "JSONPatch" },
    });
    const patch = JSON.parse(decodeBase64(body.response.patch));
    expect(patch[0]).toEqual({
      op: "replace",
      path: "/spec/volumeClaimTemplates",
      value: r.request.oldObject.spec.volumeClaimTemplates,
    });
    expect(patch.map((p: any) => p.path)).toContain(`/metadata/annotations/${Keys.templates.replace("/", "~1")}`);
    expect(body.response.warnings).toEqual([
      "claimstep will grow data-db-* to 2Gi one ordinal at a time; see `claimstep status db`",
      expect.stringMatching(/^claimstep: This change ends in a re-create of StatefulSet cap\/db /),
    ]);
    expect(calls).toEqual([]);
  });

  it("a set not opted in: allowed, no patch; opted in by the namespace entry (…/by-namespace, or ?scope=namespace): patched", async () => {
    const out = review((r) => delete r.request.object.metadata.labels[ADMISSION_LABEL]);
    const plain: any = await (await post(out)).json();
    expect(plain.response).toEqual({ uid: out.request.uid, allowed: true });
    const ns: any = await (await post(out, undefined, "?scope=namespace&timeout=5s")).json();
    expect(ns.response.patchType).toBe("JSONPatch");
    const byPath = await app.request("/v1/admission/statefulsets/by-namespace?timeout=5s", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(out),
    });
    expect(((await byPath.json()) as any).response.patchType).toBe("JSONPatch");
    expect(
      (
        await app.request("/v1/admission/statefulsets/other", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(out),
        })
      ).status,
    ).toBe(404);
  });

  it("invalid templates: allowed false with claimstep's reason (the API server shows it), status 400 BadRequest (never 409/422: Flux's force deletes on those)", async () => {
    const r = review((x) => (x.request.object.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "0"));
    const body: any = await (await post(r)).json();
    expect(body.response).toMatchObject({
      allowed: false,
      status: { code: 400, reason: "BadRequest", message: expect.stringMatching(/storage must be positive/) },
    });
    expect(body.response).not.toHaveProperty("patch");
  });

  it.each([
    ["not JSON", "{", 400, /the body is not JSON/],
    [
      "a v1beta1 review",
      { apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: { uid: "u" } },
      400,
      /admission\.k8s\.io\/v1 AdmissionReview/,
    ],
    ["no request", { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }, 400, /request/],
    ["nested 10,000 deep", `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`, 400, /nests deeper than 64 levels/],
  ])("%s: %d with a clear message", async (_what, body, code, message) => {
    const res = await post(body);
    expect(res.status).toBe(code);
    expect(((await res.json()) as any).message).toMatch(message);
  });

  it("not application/json: 415; over the body limit: 413 (read no further)", async () => {
    expect((await post(review(), { "content-type": "text/plain" })).status).toBe(415);
    const huge = JSON.stringify(
      review((r) => (r.request.object.metadata.annotations.big = "x".repeat(ADMISSION_BODY_LIMIT))),
    );
    expect((await post(huge)).status).toBe(413);
  });

  it("a GET is 405 with Allow: POST", async () => {
    const res = await app.request("/v1/admission/statefulsets");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("hostile reviews (random values anywhere in the request) never get a 500, and a patch only ever restores the stored templates", async () => {
    const paths = [
      ["request", "object", "spec"],
      ["request", "object", "spec", "volumeClaimTemplates"],
      ["request", "object", "metadata"],
      ["request", "oldObject", "spec", "volumeClaimTemplates"],
      ["request", "kind"],
      ["request", "object", "metadata", "annotations"],
      ["request", "object", "spec", "volumeClaimTemplates", "0", "spec", "resources"],
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 4 }), async (path, value) => {
        const r = review((x) => {
          let at = x;
          for (const k of path.slice(0, -1)) at = at?.[k];
          if (at && typeof at === "object") at[path.at(-1)!] = value;
        });
        const res = await post(r);
        expect([200, 400]).toContain(res.status);
        if (res.status !== 200) return;
        const body: any = await res.json();
        if (!body.response.patch) return;
        const patch = JSON.parse(decodeBase64(body.response.patch));
        expect(patch[0]).toEqual({
          op: "replace",
          path: "/spec/volumeClaimTemplates",
          value: r.request.oldObject.spec.volumeClaimTemplates,
        });
        for (const op of patch.slice(1))
          expect(op.path).toMatch(/^\/metadata\/annotations(\/claimstep\.io~1[a-z-]+)?$/);
      }),
      { numRuns: 200 },
    );
    expect(calls).toEqual([]);
  });

  it("jsonDepth counts brackets outside strings only", () => {
    expect(jsonDepth('{"a":"[[[[[[","b":[1,{"c":2}]}', 64)).toBe(3);
    expect(jsonDepth('"\\"[["', 64)).toBe(0);
  });
});

describe("admission reviews in flight", () => {
  // Defect (issue 37, item 2): the slot was taken before the body was read, so 8 slow senders shut
  // out every genuine review (503). A review now takes a slot once its body is in; what bodies being
  // read can hold is the Node server's share of connections for the route (test/functions/server-slow-bodies.test.ts).
  it("takes no slot for a review whose body is still coming, and answers 503 with Retry-After beyond maxInFlight", async () => {
    const { admissionRoutes } = await import("../../../functions/routes/admission.js");
    const none = await admissionRoutes({ maxInFlight: 0 }).request("/v1/admission/statefulsets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review()),
    });
    expect(none.status).toBe(503);
    expect(none.headers.get("retry-after")).toBe("1");
    expect(await none.text()).toMatch(/at most 0 admission reviews at once/);
    const one = admissionRoutes({ maxInFlight: 1 });
    let finish!: () => void;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{"));
        finish = () => controller.close();
      },
    });
    const first = one.request("/v1/admission/statefulsets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stalled,
      duplex: "half",
    } as RequestInit);
    const meanwhile = await one.request("/v1/admission/statefulsets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review()),
    });
    expect(meanwhile.status).toBe(200); // the stalled body holds no slot
    finish();
    expect((await first).status).toBe(400); // "{" is not JSON
    const again = await one.request("/v1/admission/statefulsets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review()),
    });
    expect(again.status).toBe(200);
  });

  // The slot no longer bounds the bytes read at once: a budget of bytes does, which a slow sender
  // (holding only what it sent) cannot use up, and which a large body beyond it is refused by.
  it("refuses a body that would take the route's bodies beyond the budget (503), and not a trickling one", async () => {
    const { admissionRoutes } = await import("../../../functions/routes/admission.js");
    const body = JSON.stringify(review());
    const routes = admissionRoutes({ bodyBudgetBytes: body.length + 100 });
    const trickling: Array<() => void> = [];
    const pending = [0, 1, 2].map(() =>
      routes.request("/v1/admission/statefulsets", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("{".padEnd(30)));
            trickling.push(() => controller.close());
          },
        }),
        duplex: "half",
      } as RequestInit),
    );
    const post = () =>
      routes.request("/v1/admission/statefulsets", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    expect((await post()).status).toBe(200); // 3 × 30 bytes held, the review fits beside them
    const twice = await routes.request("/v1/admission/statefulsets", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body + " ".repeat(body.length),
    });
    expect(twice.status).toBe(503);
    expect(twice.headers.get("retry-after")).toBe("1");
    for (const finish of trickling) finish();
    for (const p of pending) expect((await p).status).toBe(400);
    expect((await post()).status).toBe(200); // everything given back
  });
});
