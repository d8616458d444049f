// core/change/change.ts changeOf: one (live set, request) → change for every door (issue 38 point 2). The
// doors' own tests (desired.test.ts, admission*.test.ts, the CLI's and the route's) hold each
// request's details; these check that the doors' requests answer through one function with one
// result shape, and the helpers every door shares.
import { describe, expect, it } from "vitest";
import { changeOf } from "../../../core/change/change.js";
import { claimEdit, desiredChange, templateAdd, templateRemove } from "../../../core/change/desired.js";
import { Keys } from "../../../core/keys.js";
import { sameDocument, sameJson, stableJSON } from "../../../core/kube/json.js";
import type { ClaimTemplate, StatefulSet } from "../../../core/kube/k8s.js";
import { mountsWithoutVolume } from "../../../core/kube/mounts.js";
import { isServerDefault, pullPolicyFor } from "../../../core/kube/pod-defaults.js";
import { withoutServerFields } from "../../../core/kube/server-fields.js";
import { partitionHold } from "../../../core/policy/partition-hold.js";
import { fixtureJson as fixture } from "../../fixtures/apiserver.js";

const tpl = (name: string, storage: string): ClaimTemplate => ({
  metadata: { name },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage } } },
});

const web = (annotations: Record<string, string> = {}): StatefulSet => {
  const set: StatefulSet = fixture("statefulset-web.json");
  set.metadata.annotations = annotations;
  return set;
};

const ok = <T extends { ok: boolean }>(c: T): Extract<T, { ok: true }> => {
  if (!c.ok) throw new Error((c as unknown as { message: string }).message);
  return c as Extract<T, { ok: true }>;
};

describe("changeOf: one answer for every door", () => {
  it("the templates route and set's claim edit: the desired change, nothing removed, held or said", () => {
    const route = ok(changeOf(web(), { kind: "templates", templates: [tpl("data", "2Gi")] }));
    const { ok: _, ...same } = ok(desiredChange(web(), [tpl("data", "2Gi")]));
    expect(route).toEqual({ ok: true, ...same, removals: [], containers: [], warnings: [] });
    const claim = ok(changeOf(web(), { kind: "claim", claim: "data", edit: { storage: "2Gi" } }));
    expect(claim.annotations).toEqual(ok(claimEdit(web(), "data", { storage: "2Gi" })).annotations);
    expect(changeOf(web(), { kind: "claim", claim: "nope", edit: { storage: "2Gi" } })).toMatchObject({ ok: false });
  });

  it("set --hold-pods (P5): the hold and every annotation written with it, ClaimsFirst and the user's partition recorded", () => {
    const live = web();
    live.spec = {
      ...live.spec,
      replicas: 3,
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 1 } },
    };
    const held = ok(changeOf(live, { kind: "claim", claim: "data", edit: { storage: "2Gi" }, holdPods: true }));
    const plain = ok(changeOf(live, { kind: "claim", claim: "data", edit: { storage: "2Gi" } }));
    expect(plain.hold).toBeUndefined();
    expect(held.hold).toEqual(partitionHold(3, 1, false));
    expect(held.annotations).toEqual({
      ...plain.annotations,
      [Keys.podCoordination]: "ClaimsFirst",
      [Keys.userPartition]: "1",
    });
    // A record already there is kept: not written again.
    const recorded = web({ [Keys.userPartition]: "0" });
    recorded.spec = { ...recorded.spec, replicas: 3, updateStrategy: { rollingUpdate: { partition: 3 } } };
    const again = ok(changeOf(recorded, { kind: "claim", claim: "data", edit: { storage: "2Gi" }, holdPods: true }));
    expect(again.hold).toEqual({ partition: 3, from: 3 });
    expect(again.annotations[Keys.userPartition]).toBeUndefined();
    expect(again.annotations[Keys.podCoordination]).toBe("ClaimsFirst");
  });

  it("set --add and --remove: templateAdd's and templateRemove's answer", () => {
    const add = ok(changeOf(web(), { kind: "add", template: tpl("logs", "1Gi"), options: {} }));
    expect(add.annotations).toEqual(ok(templateAdd(web(), tpl("logs", "1Gi"), {})).annotations);
    expect(add.annotations[Keys.finalize]).toBe("Recreate");
    const remove = ok(changeOf(web(), { kind: "remove", template: "data" }));
    expect(remove.annotations).toEqual(ok(templateRemove(web(), "data")).annotations);
    expect(JSON.parse(remove.annotations[Keys.removeTemplates]!)).toEqual(["data"]);
  });

  it("the webhook's new spec: the requested templates into the annotation, said; an added one listed for the re-create", () => {
    const live = web();
    const update = { metadata: { ...live.metadata }, spec: { ...live.spec } };
    const grow = ok(
      changeOf(live, { kind: "spec", update, requested: [tpl("data", "2Gi")], name: "default/web", setName: "web" }),
    );
    expect(grow.annotations[Keys.strategy]).toBe("InPlace");
    expect(grow.warnings.join("\n")).toContain("claimstep will grow data-web-* to 2Gi");
    const added = ok(
      changeOf(live, {
        kind: "spec",
        update,
        requested: [...live.spec.volumeClaimTemplates!.map(withoutServerFields), tpl("logs", "1Gi")],
        name: "default/web",
        setName: "web",
      }),
    );
    expect(added.warnings.join("\n")).toContain("claimstep will add the claim template logs");
    // Nothing to remove: the list is removed (when the update carries one).
    expect(added.removals).toContain(Keys.removeTemplates);
  });

  it("refuses what the API server would: a name twice", () => {
    const live = web();
    const update = { metadata: { ...live.metadata }, spec: { ...live.spec } };
    const twice = changeOf(live, {
      kind: "spec",
      update,
      requested: [tpl("data", "1Gi"), tpl("logs", "1Gi"), tpl("logs", "2Gi")],
      name: "default/web",
      setName: "web",
    });
    expect(twice).toMatchObject({ ok: false, message: expect.stringContaining('"logs" twice') });
  });
});

describe("the helpers every door shares", () => {
  it("order-free JSON: same content whatever the keys' order; an undefined value is no key", () => {
    expect(sameJson({ a: 1, b: [{ c: 2, d: 3 }] }, { b: [{ d: 3, c: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(stableJSON({ b: 1, a: { d: 2, c: undefined } })).toBe('{"a":{"d":2},"b":1}');
    expect(sameDocument('{"b":1,"a":2}', { a: 2, b: 1 })).toBe(true);
    expect(sameDocument("{not json", {})).toBe(false);
    expect(sameDocument(undefined, {})).toBe(false);
  });

  it("server-set fields: one list, the template as written", () => {
    const served = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data", creationTimestamp: null, uid: "u", resourceVersion: "1", labels: { a: "b" } },
      spec: { resources: { requests: { storage: "1Gi" } } },
      status: { phase: "Pending" },
    } as unknown as ClaimTemplate;
    expect(withoutServerFields(served)).toEqual({
      metadata: { name: "data", labels: { a: "b" } },
      spec: { resources: { requests: { storage: "1Gi" } } },
    });
  });

  it("mounts: each mount of a volume neither the volumes nor the templates give, init containers first", () => {
    const pod = {
      spec: {
        initContainers: [{ name: "init", volumeMounts: [{ name: "wal" }] }],
        containers: [
          { name: "app", volumeMounts: [{ name: "data" }, { name: "cfg" }], volumeDevices: [{ name: "raw" }] },
        ],
        volumes: [{ name: "cfg" }],
      },
    };
    expect(mountsWithoutVolume(pod, ["data"])).toEqual([
      { container: "init", volume: "wal" },
      { container: "app", volume: "raw" },
    ]);
    expect(mountsWithoutVolume("not a pod template", [])).toEqual([]);
  });

  it("the partition hold: replicas or the live partition, the user's recorded once", () => {
    expect(partitionHold(3, 0, false)).toEqual({ partition: 3, from: 0, userPartition: 0 });
    expect(partitionHold(3, 5, true)).toEqual({ partition: 5, from: 5 });
  });

  it("pod defaults: what the server sets anyway", () => {
    expect(pullPolicyFor("nginx")).toBe("Always");
    expect(pullPolicyFor("nginx:1.27")).toBe("IfNotPresent");
    expect(pullPolicyFor("registry:5000/nginx")).toBe("Always");
    expect(pullPolicyFor("nginx@sha256:abc")).toBe("IfNotPresent");
    expect(isServerDefault("dnsPolicy", "ClusterFirst", {})).toBe(true);
    expect(isServerDefault("resources", {}, {})).toBe(true);
    expect(isServerDefault("emptyDir", {}, {})).toBe(false);
    expect(isServerDefault("imagePullPolicy", "Always", { image: "nginx" })).toBe(true);
    expect(isServerDefault("terminationGracePeriodSeconds", 60, {})).toBe(false);
  });
});
