import { describe, expect, it } from "vitest";
import {
  claimEdit,
  desiredChange,
  templateAdd,
  templateRemove,
  templatesFromDocument,
} from "../../../core/change/desired.js";
import { Keys } from "../../../core/keys.js";
import type { ClaimTemplate, StatefulSet } from "../../../core/kube/k8s.js";
import { fixtureJson as fixture } from "../../fixtures/apiserver.js";

const tpl = (name: string, storage: string, extra: Partial<ClaimTemplate["spec"]> = {}): ClaimTemplate => ({
  metadata: { name },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage } }, ...extra },
});

/** The captured `web`, with a second template `wal` and the given annotations. */
const web = (annotations: Record<string, string> = {}): StatefulSet => {
  const set: StatefulSet = fixture("statefulset-web.json");
  set.spec.volumeClaimTemplates = [
    ...set.spec.volumeClaimTemplates!,
    { ...tpl("wal", "1Gi"), status: { phase: "Pending" } } as ClaimTemplate,
  ];
  set.metadata.annotations = annotations;
  return set;
};

const desiredOf = (change: ReturnType<typeof desiredChange>) => {
  if (!change.ok) throw new Error(change.message);
  return JSON.parse(change.annotations[Keys.templates]!);
};

describe("desiredChange", () => {
  it("writes the whole array: posted templates replace theirs, the others keep their live value, server fields dropped", () => {
    const change = desiredChange(web(), [tpl("wal", "5Gi")]);
    expect(change).toMatchObject({ ok: true, changed: true });
    const desired = desiredOf(change);
    expect(desired.map((t: ClaimTemplate) => `${t.metadata.name}=${t.spec.resources!.requests!.storage}`)).toEqual([
      "data=1Gi",
      "wal=5Gi",
    ]);
    expect(JSON.stringify(desired)).not.toMatch(/creationTimestamp|"status"/);
    expect(change.ok && change.annotations[Keys.strategy]).toBe("InPlace");
  });

  it("keeps what an earlier change desired for the templates not posted", () => {
    const earlier = web({ [Keys.templates]: JSON.stringify([tpl("data", "3Gi"), tpl("wal", "1Gi")]) });
    expect(
      desiredOf(desiredChange(earlier, [tpl("wal", "2Gi")])).map(
        (t: ClaimTemplate) => t.spec.resources!.requests!.storage,
      ),
    ).toEqual(["3Gi", "2Gi"]);
  });

  it("replaces an invalid annotation as a whole", () => {
    const broken = web({ [Keys.templates]: "{not json" });
    expect(
      desiredOf(desiredChange(broken, [tpl("data", "2Gi")])).map(
        (t: ClaimTemplate) => t.spec.resources!.requests!.storage,
      ),
    ).toEqual(["2Gi", "1Gi"]);
  });

  it("reports no change when the set already desires exactly that", () => {
    const first = desiredChange(web(), [tpl("data", "2Gi")]);
    if (!first.ok) throw new Error(first.message);
    const again = desiredChange(web(first.annotations), [tpl("data", "2Gi")]);
    expect(again).toMatchObject({ ok: true, changed: false, revision: first.revision });
  });

  it("refuses what the planner would block on, naming the set and the fix", () => {
    expect(desiredChange(web(), [tpl("logs", "1Gi")])).toEqual({
      ok: false,
      message:
        'StatefulSet default/web has no claim template "logs" (it has: data, wal); this updates existing templates: to add one, claimstep set web logs --add --storage <size> (a re-create; docs/templates.md)',
    });
    const bad = desiredChange(web(), [tpl("data", "lots")]);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/template "data" spec.resources.requests.storage: .*lots/);
    const none = desiredChange(web(), [{ metadata: { name: "data" }, spec: {} }]);
    expect(!none.ok && none.message).toMatch(/template "data" has no spec.resources.requests.storage/);
  });
});

describe("claimEdit", () => {
  it("changes storage and/or the VAC of one claim, keeping the rest of its template", () => {
    const change = claimEdit(web(), "data", { volumeAttributesClassName: "gold" });
    const data = desiredOf(change)[0];
    expect(data.spec).toMatchObject({
      storageClassName: "fast",
      volumeAttributesClassName: "gold",
      resources: { requests: { storage: "1Gi" } },
    });
    const both = desiredOf(claimEdit(web(), "wal", { storage: "20Gi", volumeAttributesClassName: "silver" }))[1];
    expect(both.spec).toMatchObject({
      volumeAttributesClassName: "silver",
      resources: { requests: { storage: "20Gi" } },
    });
  });

  it("refuses an edit that changes nothing or names no template", () => {
    expect(claimEdit(web(), "data", {})).toEqual({
      ok: false,
      message: "nothing to change: give --storage and/or --vac",
    });
    expect(claimEdit(web(), "logs", { storage: "1Gi" })).toEqual({
      ok: false,
      message:
        'StatefulSet default/web has no claim template "logs" (it has: data, wal); to add one: claimstep set web logs --add --storage <size>',
    });
  });
});

describe("templatesFromDocument", () => {
  const ref = { namespace: "default", name: "web" };

  it("takes a manifest without a namespace as the URL's", () => {
    const doc = {
      kind: "StatefulSet",
      metadata: { name: "web" },
      spec: { selector: {}, volumeClaimTemplates: [tpl("data", "2Gi")] },
    };
    expect(templatesFromDocument(doc, ref)).toEqual({ ok: true, templates: [tpl("data", "2Gi")] });
  });

  it("lists the issues of a manifest of another kind or without templates", () => {
    expect(
      templatesFromDocument({ kind: "Deployment", metadata: { name: "web" }, spec: { selector: {} } }, ref),
    ).toMatchObject({
      ok: false,
      issues: [{ path: "kind" }],
    });
    expect(
      templatesFromDocument({ kind: "StatefulSet", metadata: { name: "web" }, spec: { selector: {} } }, ref),
    ).toEqual({
      ok: false,
      issues: [{ path: "spec.volumeClaimTemplates", message: "the manifest has no volumeClaimTemplates" }],
    });
  });
});

/** The containers of a held pod template annotation. */
const heldContainers = (annotations: Record<string, string>, key: "containers" | "initContainers" = "containers") =>
  JSON.parse(annotations[Keys.podTemplate]!).spec[key] as {
    name: string;
    volumeMounts?: { name: string; mountPath: string }[];
  }[];

const ok = (change: ReturnType<typeof templateAdd>) => {
  if (!change.ok) throw new Error(change.message);
  return change;
};

describe("templateAdd", () => {
  it("appends the template to the desired templates, asks for a re-create and opts the set in", () => {
    const change = ok(templateAdd(web(), tpl("logs", "2Gi"), {}));
    expect(change.changed).toBe(true);
    expect(desiredOf(change).map((t: ClaimTemplate) => t.metadata.name)).toEqual(["data", "wal", "logs"]);
    expect(change.annotations[Keys.finalize]).toBe("Recreate");
    expect(change.annotations[Keys.strategy]).toBe("InPlace");
    expect(change.annotations[Keys.podTemplate]).toBeUndefined();
    expect(change.annotations[Keys.removeTemplates]).toBeUndefined();
  });

  it("holds the live pod template with the new volume mounted in the first container, or the one named", () => {
    const change = ok(templateAdd(web(), tpl("logs", "2Gi"), { mountPath: "/logs" }));
    expect(heldContainers(change.annotations)[0]).toMatchObject({
      name: "c",
      image: "nginx",
      volumeMounts: [{ name: "logs", mountPath: "/logs" }],
    });
    const two = web();
    (two.spec as unknown as { template: { spec: { containers: unknown[] } } }).template.spec.containers.push({
      name: "side",
      image: "busybox",
      volumeMounts: [{ name: "data", mountPath: "/data" }],
    });
    const side = ok(templateAdd(two, tpl("logs", "2Gi"), { mountPath: "/logs", container: "side" }));
    expect(heldContainers(side.annotations).map((c) => c.volumeMounts ?? [])).toEqual([
      [],
      [
        { name: "data", mountPath: "/data" },
        { name: "logs", mountPath: "/logs" },
      ],
    ]);
  });

  it("builds on a pod template already held, and takes the name out of the templates to remove", () => {
    const first = ok(templateAdd(web(), tpl("logs", "2Gi"), { mountPath: "/logs" }));
    const again = ok(
      templateAdd(
        web({ ...first.annotations, [Keys.removeTemplates]: JSON.stringify(["cache", "tmp"]) }),
        tpl("tmp", "1Gi"),
        { mountPath: "/tmp" },
      ),
    );
    expect(heldContainers(again.annotations)[0]!.volumeMounts).toEqual([
      { name: "logs", mountPath: "/logs" },
      { name: "tmp", mountPath: "/tmp" },
    ]);
    expect(JSON.parse(again.annotations[Keys.removeTemplates]!)).toEqual(["cache"]);
    expect(desiredOf(again).map((t: ClaimTemplate) => t.metadata.name)).toEqual(["data", "wal", "logs", "tmp"]);
  });

  it("refuses a name the set has or will have, a name Kubernetes refuses, a mount path in use, a container it lacks", () => {
    expect(templateAdd(web(), tpl("wal", "1Gi"), {})).toEqual({
      ok: false,
      message:
        'StatefulSet default/web already has claim template "wal"; change its size with claimstep set web wal --storage <size>, or pick another name',
    });
    const pending = ok(templateAdd(web(), tpl("logs", "2Gi"), {}));
    expect(templateAdd(web(pending.annotations), tpl("logs", "3Gi"), {})).toMatchObject({
      ok: false,
      message: expect.stringContaining('already has claim template "logs" (to be added by the re-create)'),
    });
    for (const bad of ["Logs", "logs_1", "-logs", "a".repeat(64)]) {
      const r = templateAdd(web(), tpl(bad, "1Gi"), {});
      expect(r.ok).toBe(false);
      expect(!r.ok && r.message).toContain(`claim template name "${bad}"`);
      expect(!r.ok && r.message).toMatch(/DNS-1123 label/);
    }
    const used = web();
    (used.spec as unknown as { template: { spec: { containers: { volumeMounts?: unknown[] }[] } } }).template.spec
      .containers[0]!.volumeMounts = [{ name: "data", mountPath: "/var/lib" }];
    expect(templateAdd(used, tpl("logs", "1Gi"), { mountPath: "/var/lib" })).toEqual({
      ok: false,
      message:
        'StatefulSet default/web: container "c" already mounts volume "data" at /var/lib; give another --mount-path',
    });
    expect(templateAdd(web(), tpl("logs", "1Gi"), { mountPath: "/logs", container: "app" })).toEqual({
      ok: false,
      message: 'StatefulSet default/web has no container "app" (it has: c); name one with --container',
    });
    expect(templateAdd(web(), tpl("logs", "1Gi"), { mountPath: "logs" })).toMatchObject({
      ok: false,
      message: expect.stringContaining("must be an absolute path"),
    });
    expect(templateAdd(web(), tpl("logs", "lots"), {})).toMatchObject({
      ok: false,
      message: expect.stringMatching(/template "logs" spec.resources.requests.storage: .*lots/),
    });
  });
});

describe("templateRemove", () => {
  const mounting = (annotations: Record<string, string> = {}): StatefulSet => {
    const set = web(annotations);
    const spec = (set.spec as unknown as { template: { spec: Record<string, unknown> } }).template.spec;
    spec.containers = [
      {
        name: "c",
        image: "nginx",
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "wal", mountPath: "/wal" },
        ],
      },
    ];
    spec.initContainers = [{ name: "init", image: "busybox", volumeMounts: [{ name: "wal", mountPath: "/w" }] }];
    return set;
  };

  it("lists the name to remove, drops it from the desired templates and asks for a re-create", () => {
    const change = ok(templateRemove(web(), "wal"));
    expect(JSON.parse(change.annotations[Keys.removeTemplates]!)).toEqual(["wal"]);
    expect(desiredOf(change).map((t: ClaimTemplate) => t.metadata.name)).toEqual(["data"]);
    expect(change.annotations[Keys.finalize]).toBe("Recreate");
    expect(change.annotations[Keys.podTemplate]).toBeUndefined();
    expect(change.templates.map((t) => t.metadata.name)).toEqual(["data"]);
  });

  it("holds a pod template without the removed volume's mounts, in every container and init container", () => {
    const change = ok(templateRemove(mounting(), "wal"));
    expect(heldContainers(change.annotations)[0]!.volumeMounts).toEqual([{ name: "data", mountPath: "/data" }]);
    expect(heldContainers(change.annotations, "initContainers")[0]!.volumeMounts).toEqual([]);
  });

  it("removing a template still to be added only drops it (and its held mount)", () => {
    const added = ok(templateAdd(web(), tpl("logs", "2Gi"), { mountPath: "/logs" }));
    const change = ok(templateRemove(web(added.annotations), "logs"));
    expect(desiredOf(change).map((t: ClaimTemplate) => t.metadata.name)).toEqual(["data", "wal"]);
    expect(change.annotations[Keys.removeTemplates]).toBeUndefined();
    expect(heldContainers(change.annotations)[0]!.volumeMounts).toEqual([]);
  });

  it("allows the last template, reports an already pending removal as no change, refuses a name the set lacks", () => {
    const one = web();
    one.spec.volumeClaimTemplates = one.spec.volumeClaimTemplates!.slice(0, 1);
    const last = ok(templateRemove(one, "data"));
    expect(desiredOf(last)).toEqual([]);
    const again = ok(templateRemove(web(ok(templateRemove(web(), "wal")).annotations), "wal"));
    expect(again.changed).toBe(false);
    expect(templateRemove(web(), "logs")).toEqual({
      ok: false,
      message: 'StatefulSet default/web has no claim template "logs" (it has: data, wal); nothing to remove',
    });
  });
});
