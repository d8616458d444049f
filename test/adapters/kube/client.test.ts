// The REST client against the fake API server through msw: URLs, headers, pagination, typed
// errors, and which failures it retries.
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import {
  KubeClient,
  type KubeClientOptions,
  KubeResponseError,
  parseRetryAfter,
} from "../../../adapters/kube/client.js";
import { Routes } from "../../../adapters/kube/routes.js";
import { Pod, StatefulSet } from "../../../core/kube/k8s.js";
import * as z from "../../../core/zod.js";
import { createSimServer, statefulSetObjects, storageClassObjects, useSimServer } from "../../support/index.js";

const BASE = "https://kube.test:6443";
const { fake, server } = useSimServer({ baseUrl: BASE, token: "t0ken" });

function client(extra: Partial<KubeClientOptions> = {}) {
  const waits: number[] = [];
  const c = new KubeClient({
    server: BASE,
    headers: { Authorization: "Bearer t0ken" },
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  });
  return { c, waits };
}

const web = { namespace: "default", name: "web" };

const caught = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
};

describe("KubeClient", () => {
  it("GETs and validates an object, sending the auth and extra headers", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    const { c } = client({
      headers: async () => ({ Authorization: "Bearer t0ken", "CF-Access-Client-Id": "id.access" }),
    });
    const set = await c.get(Routes.getStatefulSet, web, StatefulSet);
    expect(set.metadata.name).toBe("web");
    const [req] = fake.http.requests();
    expect(req!.headers.get("cf-access-client-id")).toBe("id.access");
    expect(req!.headers.get("accept")).toBe("application/json");
    expect(req!.headers.get("user-agent")).toBe("claimstep");
    expect(req!.headers.get("authorization")).toBe("Bearer t0ken");
  });

  it("keeps a path prefix of the server URL (an API proxy)", async () => {
    const proxied = createSimServer({
      baseUrl: "https://proxy.test/k8s/cluster-a",
      objects: statefulSetObjects({ replicas: 1 }),
    });
    server.use(...proxied.handlers);
    const c = new KubeClient({ server: "https://proxy.test/k8s/cluster-a/" });
    expect((await c.get(Routes.getStatefulSet, web, StatefulSet)).metadata.name).toBe("web");
  });

  it("follows list pages with limit/continue", async () => {
    fake.seed(...statefulSetObjects({ replicas: 7 }));
    const { c } = client({ pageSize: 3 });
    const pods = await c.list(Routes.listPods, { namespace: "default" }, Pod, { labelSelector: "app=web" });
    expect(pods.map((p) => p.metadata.name)).toEqual(["web-0", "web-1", "web-2", "web-3", "web-4", "web-5", "web-6"]);
    expect(fake.http.requests().map((r) => [r.query.get("limit"), r.query.has("continue")])).toEqual([
      ["3", false],
      ["3", true],
      ["3", true],
    ]);
  });

  it("restarts a list once when its continue token expired (410)", async () => {
    fake.seed(...statefulSetObjects({ replicas: 3 }));
    fake.http.failNext((r) => r.resource === "pods" && r.query.has("continue"), { code: 410 });
    const { c } = client({ pageSize: 2 });
    const pods = await c.list(Routes.listPods, { namespace: "default" }, Pod);
    expect(pods).toHaveLength(3);
    expect(fake.http.counters().byRequest["list pods"]).toBe(4);
  });

  it("honours Retry-After on 429 for reads, then succeeds", async () => {
    fake.seed(...storageClassObjects());
    fake.http.failNext("list storageclasses", { code: 429, retryAfterSeconds: 2 });
    const { c, waits } = client();
    await c.list(Routes.listStorageClasses, {}, z.looseObject({ metadata: z.looseObject({ name: z.string() }) }));
    expect(waits).toEqual([2000]);
  });

  it("does not wait out a Retry-After longer than its bound: the caller (the next step) retries", async () => {
    fake.seed(...storageClassObjects());
    fake.http.failNext("list storageclasses", { code: 429, retryAfterSeconds: 120 });
    const { c, waits } = client();
    const err = await caught(c.list(Routes.listStorageClasses, {}, z.unknown()));
    expect(err).toMatchObject({ kind: "TooManyRequests", code: 429, retryAfterSeconds: 120, isTransient: true });
    expect(waits).toEqual([]);
  });

  it("retries 5xx with backoff a bounded number of times", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    fake.http.failNext("get statefulsets", { code: 500 }, 5);
    const { c, waits } = client();
    const err = await caught(c.get(Routes.getStatefulSet, web, StatefulSet));
    expect(err.kind).toBe("ServerError");
    expect(err.message).toBe("get statefulsets.apps default/web: Internal error occurred: etcdserver: leader changed");
    expect(fake.http.counters().byRequest["get statefulsets"]).toBe(3);
    expect(waits).toHaveLength(2);
    expect(waits[1]!).toBeGreaterThan(waits[0]! / 2);
  });

  it("retries idempotent writes (server-side apply) but not the annotation merge patch", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }), ...storageClassObjects());
    const { c } = client();
    fake.http.failNext("patch persistentvolumeclaims", { code: 503 });
    const applied = (await c.patch(
      Routes.applyClaim,
      { namespace: "default", name: "data-web-0" },
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data-web-0" },
        spec: { resources: { requests: { storage: "2Gi" } } },
      },
      "application/apply-patch+yaml",
      { fieldManager: "claimstep", force: "true" },
    )) as any;
    expect(applied.spec.resources.requests.storage).toBe("2Gi");
    fake.http.failNext("patch statefulsets", { code: 500 });
    const err = await caught(
      c.patch(
        Routes.annotateStatefulSet,
        web,
        { metadata: { annotations: { a: "b" } } },
        "application/merge-patch+json",
      ),
    );
    expect(err.kind).toBe("ServerError");
    expect(fake.http.counters().byRequest).toMatchObject({
      "patch persistentvolumeclaims": 2,
      "patch statefulsets": 1,
    });
  });

  it("never retries a 409 and keeps the server's words for refusals", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    const { c, waits } = client();
    const err = await caught(
      c.patch(
        Routes.annotateStatefulSet,
        web,
        { metadata: { resourceVersion: "1", annotations: { a: "b" } } },
        "application/merge-patch+json",
      ),
    );
    expect(err).toMatchObject({
      kind: "Conflict",
      code: 409,
      isTransient: true,
      request: "patch statefulsets.apps default/web",
    });
    expect(err.message).toMatch(/^Operation cannot be fulfilled on statefulsets.apps "web"/);
    expect(waits).toEqual([]);
  });

  it("says which permission RBAC refused, and tells it from an admission refusal", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    fake.http.deny("list", "pods");
    const { c } = client();
    const rbac = await caught(c.list(Routes.listPods, { namespace: "default" }, Pod));
    expect(rbac.isAdmissionForbidden).toBe(false);
    expect(rbac.message).toBe(
      'list pods in default: pods is forbidden: User "system:serviceaccount:claimstep:claimstep" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    fake.http.failNext("patch persistentvolumeclaims", {
      code: 403,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: q',
        reason: "Forbidden",
        code: 403,
      },
    });
    const admission = await caught(
      c.patch(Routes.applyClaim, { namespace: "default", name: "data-web-0" }, {}, "application/apply-patch+yaml"),
    );
    expect(admission.isAdmissionForbidden).toBe(true);
    expect(admission.message).toBe('persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: q');
  });

  it("401: names the server and what to check", async () => {
    const { c } = client({ headers: { Authorization: "Bearer wrong" } });
    const err = await caught(c.get(Routes.getStatefulSet, web, StatefulSet));
    expect(err.kind).toBe("Unauthorized");
    expect(err.message).toBe(
      `get statefulsets.apps default/web: Unauthorized (the API server at ${BASE} rejected the credentials: check the token or the kubeconfig user)`,
    );
  });

  it("times out each attempt with an AbortSignal, and retries reads", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    fake.http.failNext("get statefulsets", { hang: true });
    const { c } = client({ timeoutMs: 50 });
    expect((await c.get(Routes.getStatefulSet, web, StatefulSet)).metadata.name).toBe("web");
    fake.http.failNext("get statefulsets", { hang: true }, 3);
    const err = await caught(c.get(Routes.getStatefulSet, web, StatefulSet));
    expect(err).toMatchObject({ kind: "Timeout", isTransient: true });
    expect(err.message).toBe("get statefulsets.apps default/web: no answer from the API server within 50 ms");
  });

  it("stops at once when the caller aborts", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    fake.http.failNext("get statefulsets", { hang: true }, 3);
    const { c } = client();
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("shutting down")), 20);
    await expect(c.get(Routes.getStatefulSet, web, StatefulSet, ctl.signal)).rejects.toThrow("shutting down");
    expect(fake.http.counters().total).toBe(1);
  });

  it("network errors are transient; TLS verification errors are not", async () => {
    const refused = new KubeClient({
      server: BASE,
      fetch: () =>
        Promise.reject(
          Object.assign(new TypeError("fetch failed"), {
            cause: { code: "ECONNREFUSED", message: "connect ECONNREFUSED 10.0.0.1:6443" },
          }),
        ),
      sleep: async () => {},
    });
    const net = await caught(refused.get(Routes.getStatefulSet, web, StatefulSet));
    expect(net).toMatchObject({ kind: "ServerError", code: 0, isTransient: true });
    expect(net.message).toBe(
      `get statefulsets.apps default/web: cannot reach the API server at ${BASE}: connect ECONNREFUSED 10.0.0.1:6443`,
    );
    const tls = new KubeClient({
      server: BASE,
      fetch: () =>
        Promise.reject(Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" })),
    });
    const bad = await caught(tls.get(Routes.getStatefulSet, web, StatefulSet));
    expect(bad).toMatchObject({ kind: "Other", isTransient: false });
    expect(bad.message).toMatch(/TLS verification of https:\/\/kube.test:6443 failed \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
  });

  it("a non-Status error body (a proxy's page) still becomes a typed error", async () => {
    server.use(
      http.get(
        `${BASE}/apis/apps/v1/namespaces/default/statefulsets/web`,
        () => new HttpResponse("<html>Bad Gateway</html>", { status: 502 }),
      ),
    );
    const { c } = client({ retry: { attempts: 1 } });
    const err = await caught(c.get(Routes.getStatefulSet, web, StatefulSet));
    expect(err).toMatchObject({ kind: "ServerError", code: 502 });
    expect(err.message).toBe("get statefulsets.apps default/web: <html>Bad Gateway</html>");
  });

  it("a 2xx body that is not the object it should be is a clear error", async () => {
    server.use(
      http.get(`${BASE}/apis/apps/v1/namespaces/default/statefulsets/web`, () =>
        HttpResponse.json({ metadata: { name: "web" }, spec: { replicas: "three" } }),
      ),
    );
    const { c } = client();
    await expect(c.get(Routes.getStatefulSet, web, StatefulSet)).rejects.toThrow(KubeResponseError);
    await expect(c.get(Routes.getStatefulSet, web, StatefulSet)).rejects.toThrow(
      /^unexpected answer to get statefulsets.apps default\/web: spec.replicas: /,
    );
  });

  it("rejects a server URL it cannot use", () => {
    expect(() => new KubeClient({ server: "kube.local:6443" })).toThrow(
      /invalid Kubernetes API server URL "kube.local:6443"/,
    );
    expect(() => new KubeClient({ server: "ftp://kube" })).toThrow(/scheme must be https/);
  });

  it("parses Retry-After as seconds or as an HTTP date", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(parseRetryAfter("Mon, 30 Nov 2026 09:00:10 GMT", Date.parse("2026-11-30T09:00:00Z"))).toBe(10);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
