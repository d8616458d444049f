// Server-side apply, merge patch, selectors, preconditions and faults of the simulated API server.
import { describe, expect, it } from "vitest";
import { matchesLabels, parseLabelSelector } from "../../../adapters/kube/label-selector.js";
import { type SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import { fixtureCluster, refusal } from "./helpers.js";

const ns = "default";
const pvc = (labels: Record<string, string>, storage = "1Gi", extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "data-web-1", namespace: ns, labels, ...extra },
  spec: { resources: { requests: { storage } } },
});
const labelsOf = async (c: SimCluster) =>
  ((await c.admin.get("persistentvolumeclaims", ns, "data-web-1")).metadata as { labels: Record<string, string> })
    .labels;
const rvOf = async (c: SimCluster, r: "persistentvolumeclaims" | "statefulsets", name: string) =>
  ((await c.admin.get(r, ns, name)).metadata as { resourceVersion: string }).resourceVersion;

describe("server-side apply", () => {
  it("removes the fields an applier stopped sending, keeps those others own", async () => {
    const c = await fixtureCluster();
    await c.admin.applyClaim(pvc({ tier: "db", "claimstep.io/revision": "a" }), {
      fieldManager: "claimstep",
      force: true,
    });
    expect(await labelsOf(c)).toEqual({ app: "web", tier: "db", "claimstep.io/revision": "a" });
    await c.admin.applyClaim(pvc({ "claimstep.io/revision": "b" }), { fieldManager: "claimstep", force: true });
    expect(await labelsOf(c)).toEqual({ app: "web", "claimstep.io/revision": "b" });
    // `app` is kube-controller-manager's: sending it with the same value shares it, and dropping it later keeps it.
    await c.admin.applyClaim(pvc({ app: "web", "claimstep.io/revision": "c" }), { fieldManager: "claimstep" });
    await c.admin.applyClaim(pvc({ "claimstep.io/revision": "d" }), { fieldManager: "claimstep" });
    expect(await labelsOf(c)).toEqual({ app: "web", "claimstep.io/revision": "d" });
  });

  it("treats metadata.resourceVersion as a precondition and bumps resourceVersion only on change", async () => {
    const c = await fixtureCluster();
    const rv = await rvOf(c, "persistentvolumeclaims", "data-web-1");
    await c.admin.applyClaim(pvc({ x: "1" }, "1Gi", { resourceVersion: rv }), {
      fieldManager: "claimstep",
      force: true,
    });
    const rv2 = await rvOf(c, "persistentvolumeclaims", "data-web-1");
    expect(Number(rv2)).toBeGreaterThan(Number(rv));
    const stale = await refusal(
      c.admin.applyClaim(pvc({ x: "2" }, "1Gi", { resourceVersion: rv }), { fieldManager: "claimstep", force: true }),
    );
    expect(stale.code).toBe(409);
    expect(stale.message).toBe(
      'Operation cannot be fulfilled on persistentvolumeclaims "data-web-1": the object has been modified; please apply your changes to the latest version and try again',
    );
    await c.admin.mergePatch(
      "persistentvolumeclaims",
      ns,
      "data-web-1",
      { metadata: { labels: { x: "1" } } },
      { fieldManager: "kubectl" },
    );
    expect(await rvOf(c, "persistentvolumeclaims", "data-web-1")).toBe(rv2);
  });

  it("lists the conflicts of several managers the way structured-merge-diff prints them", async () => {
    const c = await fixtureCluster();
    await c.admin.mergePatch(
      "persistentvolumeclaims",
      ns,
      "data-web-1",
      { metadata: { labels: { tier: "db" } } },
      { fieldManager: "kubectl-edit" },
    );
    const err = await refusal(c.admin.applyClaim(pvc({ tier: "cache" }, "2Gi"), { fieldManager: "claimstep" }));
    expect(err.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "kube-controller-manager" using v1:\n- .spec.resources.requests.storage\nconflicts with "kubectl-edit" using v1:\n- .metadata.labels.tier',
    );
    expect(err.causes.map((x) => x.field)).toEqual([".metadata.labels.tier", ".spec.resources.requests.storage"]);
  });

  it("refuses to create a claim from a partial manifest (a deleted claim is never recreated by claimstep)", async () => {
    const c = await fixtureCluster();
    const err = await refusal(
      c.admin.applyClaim(
        { ...pvc({ a: "b" }), metadata: { name: "data-web-9", namespace: ns } },
        { fieldManager: "claimstep", force: true },
      ),
    );
    expect(err.code).toBe(422);
    expect(err.message).toBe(
      'PersistentVolumeClaim "data-web-9" is invalid: spec.accessModes: Required value: at least 1 access mode is required',
    );
  });

  it("shows a shrink as the API server's 422 even when forced", async () => {
    const c = await fixtureCluster();
    const err = await refusal(c.admin.applyClaim(pvc({}, "512Mi"), { fieldManager: "claimstep", force: true }));
    expect(err.code).toBe(422);
    expect(err.causes[0]?.field).toBe("spec.resources.requests.storage");
  });
});

describe("merge patch, delete, list", () => {
  it("merge-patches StatefulSet annotations with a resourceVersion precondition (409 statefulsets.apps when stale)", async () => {
    const c = await fixtureCluster();
    const rv = await rvOf(c, "statefulsets", "web");
    await c.admin.mergePatch(
      "statefulsets",
      ns,
      "web",
      { metadata: { annotations: { a: "1" }, resourceVersion: rv } },
      { fieldManager: "claimstep" },
    );
    const err = await refusal(
      c.admin.mergePatch(
        "statefulsets",
        ns,
        "web",
        { metadata: { annotations: { a: "2" }, resourceVersion: rv } },
        { fieldManager: "claimstep" },
      ),
    );
    expect(err.message).toBe(
      'Operation cannot be fulfilled on statefulsets.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(err.status?.details).toEqual({ name: "web", group: "apps", kind: "statefulsets" });
    await c.admin.mergePatch(
      "statefulsets",
      ns,
      "web",
      { metadata: { annotations: { a: null } } },
      { fieldManager: "claimstep" },
    );
    expect(
      ((await c.admin.get("statefulsets", ns, "web")).metadata as { annotations: Record<string, string> }).annotations,
    ).not.toHaveProperty("a");
  });

  it("deletes a StatefulSet with Orphan keeping pods and claims, and honours a resourceVersion precondition", async () => {
    const c = await fixtureCluster();
    const uid = ((await c.admin.get("statefulsets", ns, "web")).metadata as { uid: string }).uid;
    const stale = await refusal(
      c.admin.delete("statefulsets", ns, "web", { fieldManager: "kubectl", preconditions: { resourceVersion: "1" } }),
    );
    expect(stale.code).toBe(409);
    await c.admin.delete("statefulsets", ns, "web", {
      fieldManager: "kubectl",
      propagationPolicy: "Orphan",
      preconditions: { uid },
    });
    expect((await c.admin.list("pods", ns)).items).toHaveLength(3);
    expect((await c.admin.list("persistentvolumeclaims", ns)).items).toHaveLength(3);
    // The set lingers with its orphan finalizer until the garbage collector is done.
    expect(((await c.admin.get("statefulsets", ns, "web")).metadata as { finalizers: string[] }).finalizers).toEqual([
      "orphan",
    ]);
    c.advance(1_000);
    expect((await c.admin.list("pods", ns)).items).toHaveLength(3);
    expect((await refusal(c.admin.get("statefulsets", ns, "web"))).code).toBe(404);
  });

  it("lists by label selector (matchLabels, matchExpressions, query syntax)", async () => {
    const c = await fixtureCluster();
    await c.createStatefulSet(
      statefulSetManifest({
        name: "cache",
        replicas: 2,
        templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
      }),
    );
    const names = async (sel: Parameters<typeof c.admin.list>[2]) =>
      (await c.admin.list("persistentvolumeclaims", ns, sel)).items.map((i) => (i.metadata as { name: string }).name);
    expect(await names({ labelSelector: { matchLabels: { app: "cache" } } })).toEqual(["data-cache-0", "data-cache-1"]);
    expect(await names({ labelSelector: "app in (web)" })).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
    expect(
      await names({ labelSelector: { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] } }),
    ).toHaveLength(2);
    expect(matchesLabels(parseLabelSelector(" app!=web , tier"), { app: "db", tier: "x" })).toBe(true);
    expect(parseLabelSelector("!legacy")).toEqual([{ key: "legacy", op: "!exists" }]);
    expect(() => parseLabelSelector("a=(b")).toThrow(/unable to parse/);
  });

  it("does not serve VolumeAttributesClasses on a v1.24 server", async () => {
    const c = await fixtureCluster();
    const err = await refusal(c.admin.list("volumeattributesclasses"));
    expect(err.code).toBe(404);
    expect(err.message).toBe("the server could not find the requested resource");
  });
});

describe("faults", () => {
  const faulty = async (seed: number) => {
    const c = await fixtureCluster({
      seed,
      faults: { tooManyRequests: 0.2, serverError: 0.2, timeout: 0.2, retryAfterSeconds: 3 },
    });
    const outcomes: string[] = [];
    for (let i = 0; i < 60; i++) {
      try {
        await c.api.mergePatch(
          "statefulsets",
          ns,
          "web",
          { metadata: { annotations: { n: String(i) } } },
          { fieldManager: "claimstep" },
        );
        outcomes.push("ok");
      } catch (err) {
        const e = err as { code: number; retryAfterSeconds?: number; isTransient: boolean };
        expect(e.isTransient).toBe(true);
        if (e.code === 429) expect(e.retryAfterSeconds).toBe(3);
        outcomes.push(String(e.code));
      }
    }
    return { outcomes, counts: { ...c.faults.counts }, cluster: c };
  };

  it("are deterministic per seed and cover 429, 500 and timeouts before and after the commit", async () => {
    const a = await faulty(11);
    const b = await faulty(11);
    expect(a.outcomes).toEqual(b.outcomes);
    expect(new Set(a.outcomes)).toEqual(new Set(["ok", "429", "500", "504"]));
    expect(a.counts.timeoutAfterCommit).toBeGreaterThan(0);
    expect(a.counts.timeoutBefore).toBeGreaterThan(0);
    // Writes whose response was lost did land: one committed patch per "ok" plus one per lost response.
    const landed = a.cluster.audit.filter(
      (e) => e.actor === "claimstep" && e.verb === "patch" && e.outcome === "ok",
    ).length;
    expect(landed).toBe(a.outcomes.filter((o) => o === "ok").length + a.counts.timeoutAfterCommit);
    expect((await faulty(12)).outcomes).not.toEqual(a.outcomes);
  });
});

describe("merge patch bookkeeping", () => {
  it("leaves the stored object untouched by a no-op patch (same resourceVersion, still readable)", async () => {
    const c = await fixtureCluster();
    await c.admin.mergePatch("statefulsets", ns, "web", { spec: { replicas: 4 } }, { fieldManager: "kubectl" });
    const rv = await rvOf(c, "statefulsets", "web");
    await c.admin.mergePatch("statefulsets", ns, "web", { spec: { replicas: 4 } }, { fieldManager: "kubectl" });
    expect(await rvOf(c, "statefulsets", "web")).toBe(rv);
    expect(Object.isFrozen(await c.admin.get("statefulsets", ns, "web"))).toBe(true);
  });
});

describe("claims created by apply, events", () => {
  it("creates a complete claim by server-side apply, owned by the applier, and binds it", async () => {
    const c = await fixtureCluster();
    const manifest = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "extra", namespace: ns, labels: { app: "web" } },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "3Gi" } } },
    };
    const created = await c.admin.applyClaim(manifest, { fieldManager: "gitops" });
    const managed = (created.metadata as { managedFields: { manager: string; operation: string }[] }).managedFields;
    expect(managed).toEqual([expect.objectContaining({ manager: "gitops", operation: "Apply" })]);
    c.advance(10_000);
    expect((await c.admin.get("persistentvolumeclaims", ns, "extra")).status).toMatchObject({
      phase: "Bound",
      capacity: { storage: "3Gi" },
    });
  });

  it("refuses an Event whose note is over 1 kB", async () => {
    const c = await fixtureCluster();
    const err = await refusal(
      c.admin.createEvent(
        {
          metadata: { generateName: "web-", namespace: ns },
          eventTime: "2026-11-30T09:06:17.000000Z",
          reason: "X",
          note: "n".repeat(1025),
          type: "Normal",
        },
        { fieldManager: "claimstep" },
      ),
    );
    expect(err.code).toBe(422);
    expect(err.causes).toEqual([
      { reason: "FieldValueTooLong", message: "Too long: may not be more than 1024 bytes", field: "note" },
    ]);
  });
});
