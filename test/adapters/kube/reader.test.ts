import { describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { KubeClient, KubeResponseError } from "../../../adapters/kube/client.js";
import { KubeReader, listOptedInSets } from "../../../adapters/kube/reader.js";
import {
  capturedCluster,
  createSimServer,
  fixture,
  statefulSetObjects,
  storageClassObjects,
  useSimServer,
  volumeAttributesClass,
} from "../../support/index.js";

const BASE = "https://kube.test";
const { fake, server } = useSimServer({ baseUrl: BASE, volumeAttributesClassVersions: ["v1"] });

const reader = (base = BASE) => new KubeReader(new KubeClient({ server: base, sleep: async () => {} }));
const web = { namespace: "default", name: "web" };

describe("KubeReader", () => {
  it("loads the captured cluster: the set and its re-create record (two GETs), three LISTs with the set's selector", async () => {
    fake.seed(...capturedCluster());
    const snap = await reader().load(web);
    expect(snap.statefulSet.metadata.name).toBe("web");
    expect(snap.pods.map((p) => p.metadata.name)).toEqual(["web-0", "web-1", "web-2"]);
    expect(snap.claims.map((c) => c.metadata.name)).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
    expect(snap.storageClasses.map((c) => c.metadata.name)).toEqual(["fast", "fixed"]);
    expect(snap.volumeAttributesClasses).toBeUndefined();
    expect(fake.http.counters().byRequest).toEqual({
      "get statefulsets": 1,
      // Read whatever the set says (F4: a set someone else re-created need not ask for a re-create).
      "get configmaps": 1,
      "list pods": 1,
      "list persistentvolumeclaims": 1,
      "list storageclasses": 1,
    });
    const q = Object.fromEntries(fake.http.requests().map((r) => [r.resource, Object.fromEntries(r.query)]));
    expect(q.pods).toEqual({ labelSelector: "app=web", limit: "2000" });
    expect(q.persistentvolumeclaims).toEqual({ labelSelector: "app=web", limit: "2000" });
    expect(q.storageclasses).toEqual({ limit: "2000" });
  });

  it("drops the claims' managedFields (nothing reads them), keeps the set's (the re-create records them, F1 and F5) and every other field", async () => {
    fake.seed(...capturedCluster());
    const snap = await reader().load(web);
    const managers = (fields: unknown) =>
      (fields as { manager: string; operation: string }[] | undefined)?.map((e) => `${e.manager}/${e.operation}`);
    expect(managers(snap.statefulSet.metadata.managedFields)).toEqual(
      managers(capturedCluster().find((o) => o.kind === "StatefulSet")?.metadata.managedFields),
    );
    expect(managers(snap.statefulSet.metadata.managedFields)?.length).toBeGreaterThan(0);
    expect(snap.claims.every((c) => c.metadata.managedFields === undefined)).toBe(true);
    const { managedFields: _m, ...meta } = fixture("pvc-list").body.items[0].metadata;
    expect(snap.claims[0]!.metadata).toEqual(meta);
  });

  it("selects pods by the whole selector and claims by matchLabels only (what the StatefulSet controller copies onto claims)", async () => {
    const selector = {
      matchLabels: { app: "db" },
      matchExpressions: [{ key: "tier", operator: "In" as const, values: ["primary"] }],
    };
    fake.seed(...statefulSetObjects({ name: "db", replicas: 2, selector }), ...storageClassObjects());
    // A pod of another workload that shares app=db but not the tier.
    fake.seed({
      kind: "Pod",
      apiVersion: "v1",
      metadata: { name: "db-backup", namespace: "default", labels: { app: "db", tier: "backup" } },
      spec: {},
    });
    const snap = await reader().load({ namespace: "default", name: "db" });
    expect(snap.pods.map((p) => p.metadata.name)).toEqual(["db-0", "db-1"]);
    expect(snap.claims.map((c) => c.metadata.name)).toEqual(["data-db-0", "data-db-1"]);
    const q = Object.fromEntries(fake.http.requests().map((r) => [r.resource, r.query.get("labelSelector")]));
    expect(q).toMatchObject({ pods: "app=db,tier in (primary)", persistentvolumeclaims: "app=db" });
  });

  it("reads VolumeAttributesClasses only when a desired template names one", async () => {
    fake.seed(
      ...statefulSetObjects({
        desired: [{ name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" }],
      }),
    );
    fake.seed(...storageClassObjects(), volumeAttributesClass("gold"));
    const snap = await reader().load(web);
    expect(snap.volumeAttributesClasses?.map((v) => v.metadata.name)).toEqual(["gold"]);
    expect(fake.http.counters().reads).toBe(6);
  });

  it("falls back to storage.k8s.io/v1beta1, and treats a cluster without the API as having none", async () => {
    for (const [versions, want, lists] of [
      [["v1beta1"], ["gold"], 2],
      [[], undefined, 2],
    ] as const) {
      const base = `https://vac-${versions.length}.test`;
      const f = createSimServer({ baseUrl: base, volumeAttributesClassVersions: [...versions] });
      server.use(...f.handlers);
      f.seed(
        ...statefulSetObjects({
          templates: [{ name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" }],
        }),
      );
      f.seed(...storageClassObjects(), volumeAttributesClass("gold"));
      const snap = await reader(base).load(web);
      expect(snap.volumeAttributesClasses?.map((v) => v.metadata.name)).toEqual(want);
      expect(f.http.counters().byRequest["list volumeattributesclasses"]).toBe(lists);
    }
  });

  it("a missing StatefulSet: a NotFound naming namespace and name", async () => {
    const err = await reader()
      .load({ namespace: "shop", name: "nope" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ kind: "NotFound", code: 404 });
    expect((err as ApiError).message).toBe(
      'StatefulSet shop/nope not found (get statefulsets.apps shop/nope: statefulsets.apps "nope" not found): check the name and the namespace',
    );
    // The GET of the set, and of the re-create record that would describe a set gone mid re-create.
    expect(fake.http.requests().map((r) => `${r.verb} ${r.resource}`)).toEqual(["get statefulsets", "get configmaps"]);
  });

  it("a missing StatefulSet stays a NotFound for a claimstep without the finalize Role (the record's GET forbidden)", async () => {
    fake.http.deny("get", "configmaps");
    const err = await reader()
      .load({ namespace: "shop", name: "nope" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "NotFound", code: 404 });
  });

  it("a set that is not a StatefulSet shape: a clear error, no guessing", async () => {
    const [set] = statefulSetObjects({ replicas: 1 });
    fake.seed({ ...set!, spec: { ...(set!.spec as object), selector: "app=web" } });
    await expect(reader().load(web)).rejects.toThrow(KubeResponseError);
    await expect(reader().load(web)).rejects.toThrow(
      "unexpected answer to get statefulsets.apps default/web: spec.selector: ",
    );
  });

  it("lists the opted-in StatefulSets of a namespace, or of all", async () => {
    fake.seed(
      ...statefulSetObjects({ name: "a", replicas: 0 }),
      ...statefulSetObjects({ name: "b", replicas: 0, strategy: null }),
    );
    fake.seed(
      ...statefulSetObjects({ name: "c", replicas: 0, strategy: "OnClaimDelete" }),
      ...statefulSetObjects({ name: "d", replicas: 0, namespace: "other" }),
    );
    fake.seed(...statefulSetObjects({ name: "e", replicas: 0, namespace: "other", strategy: "OnClaimDelete" }));
    const client = new KubeClient({ server: BASE });
    expect(await listOptedInSets(client, "default")).toEqual([{ namespace: "default", name: "a" }]);
    expect(await listOptedInSets(client)).toEqual([
      { namespace: "default", name: "a" },
      { namespace: "other", name: "d" },
    ]);
    // One list of the sets and one of claimstep's records per call.
    expect(fake.http.requests().map((r) => `${r.verb} ${r.resource} ${r.namespace ?? "*"}`)).toEqual([
      "list statefulsets default",
      "list configmaps default",
      "list statefulsets *",
      "list configmaps *",
    ]);
  });

  it("lists a set deleted mid re-create by its record (claimstep's label), once, and ignores other ConfigMaps", async () => {
    const record = (namespace: string, name: string, labelled = true) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace,
        ...(labelled ? { labels: { "app.kubernetes.io/managed-by": "claimstep" } } : {}),
      },
      data: {},
    });
    fake.seed(...statefulSetObjects({ name: "a", replicas: 0 }));
    fake.seed(
      record("default", "claimstep-recreate-a"), // the set exists: listed once
      record("default", "claimstep-recreate-gone"), // the set is gone: listed by its record
      record("other", "claimstep-recreate-elsewhere"),
      record("default", "claimstep-recreate-unlabelled", false), // not claimstep's label: not a record
      record("default", "settings"), // claimstep's label, not a record's name
    );
    const client = new KubeClient({ server: BASE });
    expect(await listOptedInSets(client, "default")).toEqual([
      { namespace: "default", name: "a" },
      { namespace: "default", name: "gone" },
    ]);
    expect(await listOptedInSets(client)).toEqual([
      { namespace: "default", name: "a" },
      { namespace: "default", name: "gone" },
      { namespace: "other", name: "elsewhere" },
    ]);
    const query = fake.http.requests().find((r) => r.resource === "configmaps")!.query;
    expect(Object.fromEntries(query).labelSelector).toBe("app.kubernetes.io/managed-by=claimstep");
  });
});
