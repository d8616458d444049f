import { describe, expect, it } from "vitest";
import { claimEdit, desiredChange, templatesFromDocument } from "../../core/desired.js";
import type { ClaimTemplate, StatefulSet } from "../../core/k8s.js";
import { Keys } from "../../core/keys.js";
import { fixtureJson as fixture } from "../fixtures/apiserver.js";

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
        'StatefulSet default/web has no claim template "logs" (it has: data, wal); claimstep updates existing claims, it cannot add a template',
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
      message: 'StatefulSet default/web has no claim template "logs" (it has: data, wal)',
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
