// The simulated API server over HTTP (SimHttp): the parts every other test leans on (paths,
// lists and paging, counters, faults, hooks, RBAC, the resizer, admission) must hold, or the
// tests built on it prove nothing.
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../../adapters/kube/client.js";
import { matchesLabels, parseLabelSelector } from "../../../adapters/kube/label-selector.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { KubeClaimWriter } from "../../../adapters/kube/writer.js";
import { SimCluster } from "../../../adapters/sim/cluster.js";
import { REQUEST_LOG_LIMIT, SIM_SERVER } from "../../../adapters/sim/http.js";
import {
  capturedCluster,
  createSimServer,
  fixture,
  statefulSetObjects,
  storageClassObjects,
  useSimServer,
  volumeAttributesClass,
} from "../../support/index.js";

const BASE = "https://fake.kube:6443";
const { fake } = useSimServer({ baseUrl: BASE });

const get = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${BASE}${path}`, init);
  return { code: res.status, body: (await res.json()) as any, headers: res.headers };
};
const patch = (path: string, body: unknown, type = "application/merge-patch+json") =>
  get(path, { method: "PATCH", headers: { "Content-Type": type }, body: JSON.stringify(body) });

describe("the simulated API server over HTTP", () => {
  it("pages lists with limit/continue and filters by label selector", async () => {
    fake.seed(...statefulSetObjects({ replicas: 5 }), ...statefulSetObjects({ name: "other", replicas: 2 }));
    const seen: string[] = [];
    let cont = "";
    let pages = 0;
    do {
      const r = await get(
        `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent("app in (web)")}&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      expect(r.code).toBe(200);
      seen.push(...r.body.items.map((i: any) => i.metadata.name));
      cont = r.body.metadata.continue ?? "";
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(seen).toEqual(["web-0", "web-1", "web-2", "web-3", "web-4"]);
    expect(fake.http.counters()).toEqual({ byRequest: { "list pods": 3 }, reads: 3, writes: 0, total: 3 });
  });

  it("rejects a selector it cannot parse, a fieldSelector and a watch (it never ignores them)", async () => {
    expect((await get("/api/v1/namespaces/default/pods?labelSelector=a%20in%20b")).code).toBe(400);
    expect((await get("/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dx")).code).toBe(400);
    expect((await get("/api/v1/namespaces/default/pods?watch=true")).code).toBe(400);
  });

  it("parses every selector form and matches as the API server does", () => {
    const req = parseLabelSelector("app=web,tier in (db, cache),!canary,zone notin (a),env!=prod,ready");
    const labels = { app: "web", tier: "db", zone: "b", ready: "true" };
    expect(matchesLabels(req, labels)).toBe(true);
    expect(matchesLabels(req, { ...labels, canary: "1" })).toBe(false);
    expect(matchesLabels(req, { ...labels, env: "prod" })).toBe(false);
    expect(matchesLabels(req, { ...labels, tier: "web" })).toBe(false);
    expect(matchesLabels(parseLabelSelector(""), {})).toBe(true);
    expect(() => parseLabelSelector("a in b")).toThrow(/unable to parse/);
  });

  it("serves VolumeAttributesClasses only at the configured versions", async () => {
    const old = createSimServer({ baseUrl: "https://old.kube", volumeAttributesClassVersions: [] });
    const beta = createSimServer({
      baseUrl: "https://beta.kube",
      volumeAttributesClassVersions: ["v1beta1"],
      objects: [volumeAttributesClass("gold")],
    });
    const ask = (f: typeof old, base: string, v: string) =>
      f.http.fetch(new Request(`${base}/apis/storage.k8s.io/${v}/volumeattributesclasses`));
    const notServed = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server could not find the requested resource",
      reason: "NotFound",
      details: {},
      code: 404,
    };
    expect(await (await ask(old, "https://old.kube", "v1")).json()).toEqual(notServed);
    expect((await ask(beta, "https://beta.kube", "v1")).status).toBe(404);
    const ok = (await (await ask(beta, "https://beta.kube", "v1beta1")).json()) as any;
    expect(ok.items.map((i: any) => i.metadata.name)).toEqual(["gold"]);
  });

  it("failNext answers with the API server's bodies and headers, then recovers", async () => {
    fake.seed(...storageClassObjects());
    fake.http.failNext("list storageclasses", { code: 429, retryAfterSeconds: 3 });
    fake.http.failNext("list *", { code: 500 }, 2);
    const first = await get("/apis/storage.k8s.io/v1/storageclasses");
    expect(first.code).toBe(429);
    expect(first.headers.get("Retry-After")).toBe("3");
    expect(first.body).toMatchObject({ kind: "Status", reason: "TooManyRequests", details: { retryAfterSeconds: 3 } });
    expect((await get("/apis/storage.k8s.io/v1/storageclasses")).body).toMatchObject({
      code: 500,
      reason: "InternalError",
    });
    expect((await get("/apis/storage.k8s.io/v1/storageclasses")).code).toBe(500);
    expect((await get("/apis/storage.k8s.io/v1/storageclasses")).code).toBe(200);
  });

  it("a hanging request ends when the client aborts", async () => {
    fake.http.failNext("list pods", { hang: true });
    const err = await fetch(`${BASE}/api/v1/namespaces/default/pods`, { signal: AbortSignal.timeout(50) }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe("TimeoutError");
  });

  it("beforeNext runs a racing writer before the request, which then sees its effect", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    const rv = fake.get("statefulsets", "default", "web")!.metadata.resourceVersion;
    fake.http.beforeNext("patch statefulsets", () => {
      fake.update(
        "statefulsets",
        "default",
        "web",
        (o) => (o.metadata.annotations = { ...(o.metadata.annotations as object), other: "writer" }),
      );
    });
    const r = await patch("/apis/apps/v1/namespaces/default/statefulsets/web", {
      metadata: { resourceVersion: rv, annotations: { mine: "x" } },
    });
    expect(r.code).toBe(409);
    expect(r.body.message).toBe(
      'Operation cannot be fulfilled on statefulsets.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it("a merge patch that changes nothing keeps the resourceVersion; one that changes bumps it", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    const rv = fake.get("statefulsets", "default", "web")!.metadata.resourceVersion as string;
    expect((await patch("/apis/apps/v1/namespaces/default/statefulsets/web", {})).body.metadata.resourceVersion).toBe(
      rv,
    );
    const changed = await patch("/apis/apps/v1/namespaces/default/statefulsets/web", {
      metadata: { annotations: { a: "b" } },
    });
    expect(Number(changed.body.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
  });

  it("enforces RBAC rules and denials with messages naming verb and resource", async () => {
    const ruled = createSimServer({
      baseUrl: "https://rbac.kube",
      user: "u",
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }],
      objects: storageClassObjects(),
    });
    const ask = async (path: string, method = "GET") => {
      const res = await ruled.http.fetch(
        new Request(`https://rbac.kube${path}`, {
          method,
          ...(method === "PATCH" ? { body: "{}", headers: { "Content-Type": "application/merge-patch+json" } } : {}),
        }),
      );
      return { code: res.status, body: (await res.json()) as any };
    };
    expect((await ask("/api/v1/namespaces/default/pods")).code).toBe(200);
    expect((await ask("/apis/storage.k8s.io/v1/storageclasses")).body.message).toBe(
      'storageclasses.storage.k8s.io is forbidden: User "u" cannot list resource "storageclasses" in API group "storage.k8s.io" at the cluster scope',
    );
    expect((await ask("/apis/apps/v1/namespaces/default/statefulsets/web", "PATCH")).body.message).toBe(
      'statefulsets.apps "web" is forbidden: User "u" cannot patch resource "statefulsets" in API group "apps" in the namespace "default"',
    );
    ruled.http.deny("list", "pods");
    expect((await ask("/api/v1/namespaces/default/pods")).code).toBe(403);
  });

  it("the resizer completes expansions and VAC changes of Bound claims only", async () => {
    fake.seed(...statefulSetObjects({ replicas: 2 }), ...storageClassObjects());
    fake.update("persistentvolumeclaims", "default", "data-web-1", (o: any) => {
      o.spec.resources.requests.storage = "2Gi";
      o.spec.volumeAttributesClassName = "gold";
      o.status.allocatedResourceStatuses = { storage: "ControllerResizeInProgress" };
    });
    expect(fake.completeResizes()).toEqual(["data-web-1"]);
    const done: any = fake.get("persistentvolumeclaims", "default", "data-web-1");
    expect(done.status.capacity.storage).toBe("2Gi");
    expect(done.status.currentVolumeAttributesClassName).toBe("gold");
    expect(done.status.allocatedResourceStatuses).toBeUndefined();
    expect(fake.completeResizes()).toEqual([]);
  });

  it("ResourceQuota admission refuses an expansion past requests.storage", async () => {
    fake.seed(...statefulSetObjects({ replicas: 3 }), ...storageClassObjects(), {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "storage", namespace: "default" },
      spec: { hard: { "requests.storage": "3Gi" } },
    });
    const r = await patch(
      "/api/v1/namespaces/default/persistentvolumeclaims/data-web-2?fieldManager=claimstep&force=true",
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data-web-2" },
        spec: { resources: { requests: { storage: "2Gi" } } },
      },
      "application/apply-patch+yaml",
    );
    expect(r.code).toBe(403);
    expect(r.body.message).toBe(
      'persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=3Gi, limited: requests.storage=3Gi',
    );
    expect((fake.get("persistentvolumeclaims", "default", "data-web-2") as any).spec.resources.requests.storage).toBe(
      "1Gi",
    );
  });

  it("server-side apply releases labels the manager no longer applies, and creates nothing a PVC needs", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }), ...storageClassObjects());
    const apply = (labels: Record<string, string>, name = "data-web-0") =>
      patch(
        `/api/v1/namespaces/default/persistentvolumeclaims/${name}?fieldManager=claimstep&force=true`,
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name, labels },
          spec: { resources: { requests: { storage: "1Gi" } } },
        },
        "application/apply-patch+yaml",
      );
    expect((await apply({ tier: "db", "claimstep.io/revision": "r1" })).body.metadata.labels).toEqual({
      app: "web",
      tier: "db",
      "claimstep.io/revision": "r1",
    });
    expect((await apply({ "claimstep.io/revision": "r2" })).body.metadata.labels).toEqual({
      app: "web",
      "claimstep.io/revision": "r2",
    });
    const missing = await apply({}, "data-web-9");
    expect(missing.code).toBe(422);
    expect(missing.body.message).toBe(
      'PersistentVolumeClaim "data-web-9" is invalid: spec.accessModes: Required value: at least 1 access mode is required',
    );
  });

  it("server-side apply that stops applying a VAC clears it, which the API server refuses once the class took effect", async () => {
    fake.seed(
      ...statefulSetObjects({
        replicas: 1,
        templates: [{ name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" }],
      }),
    );
    fake.seed(...storageClassObjects());
    const apply = (spec: Record<string, unknown>) =>
      patch(
        "/api/v1/namespaces/default/persistentvolumeclaims/data-web-0?fieldManager=claimstep&force=true",
        {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: "data-web-0" },
          spec: { resources: { requests: { storage: "1Gi" } }, ...spec },
        },
        "application/apply-patch+yaml",
      );
    expect((await apply({ volumeAttributesClassName: "silver" })).code).toBe(200);
    const cleared = await apply({});
    expect(cleared.code).toBe(422);
    expect(cleared.body.message).toBe(
      'PersistentVolumeClaim "data-web-0" is invalid: spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden',
    );
  });

  it("validates Event updates: series.count at least 2, identity fields immutable", async () => {
    fake.seed(...statefulSetObjects({ replicas: 1 }));
    const created = await get("/apis/events.k8s.io/v1/namespaces/default/events", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "web-1" },
        eventTime: "2026-11-30T09:06:17.000000Z",
        reportingController: "claimstep.io/stepper",
        reportingInstance: "i",
        action: "Wait",
        reason: "ClaimResizing",
        type: "Normal",
        note: "n",
        regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: "default", name: "web" },
      }),
    });
    expect(created.code).toBe(201);
    const path = "/apis/events.k8s.io/v1/namespaces/default/events/web-1";
    expect(
      (await patch(path, { series: { count: 1, lastObservedTime: "2026-11-30T09:07:17.000000Z" } })).body.message,
    ).toBe('Event "web-1" is invalid: series.count: Invalid value: 1: should be at least 2');
    expect((await patch(path, { reason: "Other" })).code).toBe(422);
    expect(
      (await patch(path, { series: { count: 2, lastObservedTime: "2026-11-30T09:07:17.000000Z" } })).body.series.count,
    ).toBe(2);
  });

  it("answers 404 for what it does not serve, and counts it", async () => {
    expect((await get("/apis/apps/v1/namespaces/default/deployments")).code).toBe(404);
    expect((await get("/api/v1/namespaces/default/pods/web-0/status")).code).toBe(404);
    expect(fake.http.counters().byRequest).toEqual({ "list deployments": 1 });
  });

  it("authenticates bearer tokens and answers 401/403 with the captured bodies, word for word", async () => {
    const authed = createSimServer({
      baseUrl: "https://auth.kube",
      token: "good",
      user: "stepper",
      rules: [{ apiGroups: ["apps"], resources: ["statefulsets"], verbs: ["get"] }],
    });
    const ask = (token: string | undefined, path: string) =>
      authed.http.fetch(
        new Request(`https://auth.kube${path}`, token ? { headers: { Authorization: `Bearer ${token}` } } : {}),
      );
    for (const token of [undefined, "wrong"]) {
      const res = await ask(token, "/api/v1/namespaces/default/pods");
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(fixture("unauthorized").body);
    }
    const forbidden = await ask("good", "/api/v1/namespaces/default/pods");
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual(fixture("forbidden").body);
    expect(authed.http.counters().total).toBe(3);
  });

  it("takes a claim apply's metadata.resourceVersion as a precondition (pvc-patch-stale-rv), as the production writer sends it", async () => {
    fake.seed(...capturedCluster());
    const client = new KubeClient({ server: BASE });
    const { claims } = await new KubeReader(client).load({ namespace: "default", name: "web" });
    const read = claims.find((c) => c.metadata.name === "data-web-2")!;
    const action = {
      type: "PatchClaim" as const,
      namespace: "default",
      claim: "data-web-2",
      template: "data",
      ordinal: 2,
      storage: "2Gi",
      labels: { "claimstep.io/revision": "r1" },
      annotations: {},
      resourceVersion: read.metadata.resourceVersion!,
    };
    fake.update(
      "persistentvolumeclaims",
      "default",
      "data-web-2",
      (o) => (o.metadata.labels = { ...o.metadata.labels, touched: "yes" }),
    );
    const err = await new KubeClaimWriter(client)
      .apply(action)
      .catch((e: unknown) => e as { code: number; message: string });
    expect(err).toMatchObject({ code: 409 });
    expect((err as { message: string }).message).toBe(
      fixture("pvc-patch-stale-rv").body.message.replace(/"[^"]+":/, '"data-web-2":'),
    );
    expect(fake.get("persistentvolumeclaims", "default", "data-web-2")!.spec.resources.requests.storage).toBe("1Gi");
    const fresh = fake.get("persistentvolumeclaims", "default", "data-web-2")!.metadata.resourceVersion;
    await new KubeClaimWriter(client).apply({ ...action, resourceVersion: fresh });
    expect(fake.get("persistentvolumeclaims", "default", "data-web-2")!.spec.resources.requests.storage).toBe("2Gi");
  });

  it("pages with limit/continue and answers 410 Expired to a continue token older than the compaction", async () => {
    fake.seed(...statefulSetObjects({ replicas: 3 }));
    const first = await get("/api/v1/namespaces/default/pods?limit=1");
    expect(first.body.metadata.remainingItemCount).toBe(2);
    fake.http.expireContinueTokens(fake.get("statefulsets", "default", "web")!.metadata.resourceVersion);
    fake.update("pods", "default", "web-0", (o) => (o.metadata.labels = { ...o.metadata.labels, bumped: "1" }));
    const stale = await get(
      `/api/v1/namespaces/default/pods?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    expect(stale.code).toBe(410);
    expect(stale.body.reason).toBe("Expired");
  });

  it("records an exception inside the model as a bug and answers 500, never a made-up success", async () => {
    const broken = createSimServer({ baseUrl: "https://bug.kube" });
    (broken.api as unknown as { get: () => never }).get = () => {
      throw new TypeError("boom");
    };
    const res = await broken.http.fetch(
      new Request("https://bug.kube/apis/apps/v1/namespaces/default/statefulsets/web"),
    );
    expect(res.status).toBe(500);
    expect(broken.http.bugs.map((b) => b.message)).toEqual(["boom"]);
  });
});

describe("the simulated API server's request log (issue 24, item 12)", () => {
  it("keeps the last REQUEST_LOG_LIMIT requests, in order, while the counters count every request since the reset", async () => {
    const n = REQUEST_LOG_LIMIT + 5;
    for (let i = 0; i < n; i++) await fake.http.fetchLike(`${BASE}/api/v1/namespaces/default/pods/p-${i}`);
    await fake.http.fetchLike(`${BASE}/api/v1/namespaces/default/persistentvolumeclaims`);
    const log = fake.http.requests();
    expect(log).toHaveLength(REQUEST_LOG_LIMIT);
    expect(log[0]!.name).toBe("p-6");
    expect(log.at(-2)!.name).toBe(`p-${n - 1}`);
    expect(log.at(-1)!.resource).toBe("persistentvolumeclaims");
    expect(fake.http.counters()).toEqual({
      byRequest: { "get pods": n, "list persistentvolumeclaims": 1 },
      reads: n + 1,
      writes: 0,
      total: n + 1,
    });
    fake.http.resetCounters();
    expect(fake.http.requests()).toEqual([]);
    expect(fake.http.counters()).toEqual({ byRequest: {}, reads: 0, writes: 0, total: 0 });
  });

  it("takes a smaller or larger bound from requestLogLimit", async () => {
    const small = new SimCluster({ requestLogLimit: 2 });
    for (const name of ["a", "b", "c"])
      await small.http.fetchLike(`${SIM_SERVER}/api/v1/namespaces/default/pods/${name}`);
    expect(small.http.requests().map((r) => r.name)).toEqual(["b", "c"]);
    expect(small.http.counters().total).toBe(3);
  });
});
