// Helpers of the real-server scenarios of issue 27 (test/e2e/templates.test.ts): a claim template
// added to and removed from a running StatefulSet. The set, its claims by template, the volumes its
// pods mount, the annotations that ask for the add or the remove (what `claimstep set <sts> <t>
// --add/--remove` writes), a monitor of the pods while claimstep runs, and the audit summary.
import { SPECS } from "../../../functions/cli/commands.js";
import { type AuditEntry, CONTROLLER_MANAGER_USER, type E2E, type KubeObject, NODE_AGENT_USER, ok } from "./index.js";
import { statefulSetManifest } from "./scenario-finalize.js";

/** The annotation keys of the contract (core/keys.ts), spelt out: the test reads what a user writes. */
export const K = {
  strategy: "claimstep.io/volume-claim-update-strategy",
  templates: "claimstep.io/volume-claim-templates",
  removeTemplates: "claimstep.io/remove-claim-templates",
  podTemplate: "claimstep.io/pod-template",
  finalize: "claimstep.io/finalize",
  userPartition: "claimstep.io/user-partition",
  orphanedFrom: "claimstep.io/orphaned-from",
} as const;

/** Does the shipped CLI have `set <sts> <template> --add/--remove` (another helper of issue 27 adds it)? */
export function cliHasTemplateEdits(): { add: boolean; mountPath: boolean; storageClass: string | undefined } {
  const flags = (SPECS.set?.flags ?? []) as readonly string[];
  return {
    add: flags.includes("add") && flags.includes("remove"),
    mountPath: flags.includes("mount-path"),
    storageClass: ["storage-class", "class"].find((f) => flags.includes(f)),
  };
}

/** A `web`-like set: `replicas` pods mounting `data` (1Gi), the Kubernetes default OrderedReady,
 * RollingUpdate with the user's partition 0. */
export function templatesSetManifest(
  name: string,
  o: { storageClass: string; replicas?: number; policy?: "OrderedReady" | "Parallel" },
): KubeObject {
  const m = statefulSetManifest(name, { storageClass: o.storageClass, replicas: o.replicas ?? 3 });
  m.spec.podManagementPolicy = o.policy ?? "OrderedReady";
  m.spec.updateStrategy = { type: "RollingUpdate", rollingUpdate: { partition: 0 } };
  return m;
}

export const claimTemplate = (name: string, storageClass: string, storage = "1Gi") => ({
  metadata: { name },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: storageClass, resources: { requests: { storage } } },
});

const podRe = (set: string) => new RegExp(`^${set}-(\\d+)$`);
/** The set's pods (not being deleted), by ordinal. */
export async function setPods(e2e: E2E, set: string): Promise<KubeObject[]> {
  const items = ok(await e2e.api.list("pods"), "list pods").items ?? [];
  return items
    .filter((p: KubeObject) => podRe(set).test(p.metadata.name ?? ""))
    .sort((a: KubeObject, b: KubeObject) => ordinal(a.metadata.name!) - ordinal(b.metadata.name!));
}
export const ordinal = (name: string): number => Number(/-(\d+)$/.exec(name)?.[1] ?? Number.NaN);

/** The claims of template `template` of the set (`<template>-<set>-<n>`), by ordinal. */
export async function templateClaims(e2e: E2E, set: string, template: string): Promise<KubeObject[]> {
  const re = new RegExp(`^${template}-${set}-\\d+$`);
  const items = ok(await e2e.api.list("persistentvolumeclaims"), "list claims").items ?? [];
  return items
    .filter((c: KubeObject) => re.test(c.metadata.name ?? ""))
    .sort((a: KubeObject, b: KubeObject) => ordinal(a.metadata.name!) - ordinal(b.metadata.name!));
}

/** The claim names a pod's volumes name. */
export const claimNamesOf = (pod: KubeObject): string[] =>
  (pod.spec?.volumes ?? [])
    .map((v: { persistentVolumeClaim?: { claimName?: string } }) => v.persistentVolumeClaim?.claimName)
    .filter((c: string | undefined): c is string => Boolean(c))
    .sort();

export const isReady = (p: KubeObject) =>
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True");

export const uidMap = (xs: KubeObject[]): Record<string, string> =>
  Object.fromEntries(xs.map((x) => [x.metadata.name!, x.metadata.uid!]));

/** A live pod template as the annotation holds it (no server-filled metadata), with `mutate` applied. */
export function podTemplateWith(set: KubeObject, mutate: (containers: any[]) => void): unknown {
  const t = structuredClone(set.spec.template);
  delete t.metadata?.creationTimestamp;
  mutate(t.spec.containers);
  return t;
}

/** The live claim templates as the annotation holds them. */
export const cleanTemplates = (set: KubeObject): any[] =>
  (set.spec.volumeClaimTemplates ?? []).map((t: any) => {
    const { status: _s, ...rest } = structuredClone(t);
    delete rest.metadata?.creationTimestamp;
    return rest;
  });

/** What `claimstep set <set> <template> --add --storage … --mount-path …` writes (issue 27's contract). */
export function addAnnotations(
  set: KubeObject,
  template: string,
  o: { storageClass: string; storage: string; mountPath: string },
): Record<string, string> {
  return {
    [K.templates]: JSON.stringify([...cleanTemplates(set), claimTemplate(template, o.storageClass, o.storage)]),
    [K.podTemplate]: JSON.stringify(
      podTemplateWith(set, (cs) => cs[0].volumeMounts.push({ name: template, mountPath: o.mountPath })),
    ),
    [K.finalize]: "Recreate",
    [K.strategy]: "InPlace",
  };
}

/** What `claimstep set <set> <template> --remove` writes. */
export function removeAnnotations(set: KubeObject, template: string): Record<string, string> {
  return {
    [K.templates]: JSON.stringify(cleanTemplates(set).filter((t) => t.metadata.name !== template)),
    [K.removeTemplates]: JSON.stringify([template]),
    [K.podTemplate]: JSON.stringify(
      podTemplateWith(set, (cs) => {
        for (const c of cs) c.volumeMounts = (c.volumeMounts ?? []).filter((m: any) => m.name !== template);
      }),
    ),
    [K.finalize]: "Recreate",
    [K.strategy]: "InPlace",
  };
}

// ---------------------------------------------------------------------------------------------
// the pods while claimstep runs

export interface PodMonitor {
  /** The fewest Ready pods seen at once. */
  readonly minReady: () => number;
  /** Each pod uid seen, in the order first seen, with the claims it mounts. */
  readonly seen: () => { name: string; uid: string; claims: string[] }[];
  done(): Promise<void>;
}

/** Polls the set's pods (every `intervalMs`, at most `maxPolls` times) until done(). */
export function podMonitor(e2e: E2E, set: string, o: { intervalMs?: number; maxPolls?: number } = {}): PodMonitor {
  let stop = false;
  let min = Number.POSITIVE_INFINITY;
  const seen = new Map<string, { name: string; uid: string; claims: string[] }>();
  const loop = (async () => {
    for (let i = 0; i < (o.maxPolls ?? 2000) && !stop; i++) {
      const r = await e2e.api.list("pods");
      if (r.status === 200) {
        const pods = (r.body.items ?? []).filter((p: KubeObject) => podRe(set).test(p.metadata.name ?? ""));
        min = Math.min(min, pods.filter(isReady).length);
        for (const p of pods)
          if (!seen.has(p.metadata.uid!))
            seen.set(p.metadata.uid!, { name: p.metadata.name!, uid: p.metadata.uid!, claims: claimNamesOf(p) });
      }
      await new Promise((res) => setTimeout(res, o.intervalMs ?? 200));
    }
  })();
  return {
    minReady: () => min,
    seen: () => [...seen.values()],
    async done() {
      stop = true;
      await loop;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the audit summary

export const byStatefulSetControllerUA = (e: AuditEntry) => /\/statefulset-controller$/.test(e.userAgent);

const short = (e: AuditEntry) =>
  `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""} ${e.name} → ${e.code}`;

export interface AddRemoveAudit {
  claimstepWrites: AuditEntry[];
  creates: AuditEntry[];
  orphanDeletes: AuditEntry[];
  evictions: AuditEntry[];
  claimPatches: AuditEntry[];
  controllerClaimCreates: AuditEntry[];
  controllerPodCreates: AuditEntry[];
  podDeletes: AuditEntry[];
  claimDeletes: AuditEntry[];
  lines: string[];
}

/** The audit log of an add or a remove since `since`: claimstep's writes and what the others did. */
export function addRemoveAudit(e2e: E2E, set: string, since: number, what: string): AddRemoveAudit {
  const all = e2e.audit({ since: new Date(since) });
  const me = e2e.info.claimstepUser;
  const write = (e: AuditEntry) => !["get", "list", "watch"].includes(e.verb) && e.resource !== "events";
  const claimstepWrites = all.filter((e) => e.user === me && write(e));
  const creates = claimstepWrites.filter((e) => e.verb === "create" && e.subresource === "" && e.code < 300);
  const orphanDeletes = claimstepWrites.filter(
    (e) => e.verb === "delete" && e.resource === "statefulsets" && e.name === set && e.code < 300,
  );
  const evictions = claimstepWrites.filter((e) => e.resource === "pods" && e.subresource === "eviction");
  const claimPatches = claimstepWrites.filter(
    (e) => e.resource === "persistentvolumeclaims" && (e.verb === "patch" || e.verb === "update"),
  );
  const controller = all.filter((e) => e.user === CONTROLLER_MANAGER_USER && byStatefulSetControllerUA(e));
  const controllerClaimCreates = controller.filter(
    (e) => e.verb === "create" && e.resource === "persistentvolumeclaims" && e.code < 300,
  );
  const controllerPodCreates = controller.filter((e) => e.verb === "create" && e.resource === "pods" && e.code < 300);
  const deletes = all.filter(
    (e) => (e.verb === "delete" || e.verb === "deletecollection") && e.subresource === "" && e.code < 300,
  );
  const podDeletes = deletes.filter((e) => e.resource === "pods");
  const claimDeletes = deletes.filter((e) => e.resource === "persistentvolumeclaims");
  const by = (es: AuditEntry[]) => {
    const n = new Map<string, number>();
    for (const e of es) {
      const who = e.user === NODE_AGENT_USER ? "the node agent" : e.user;
      n.set(who, (n.get(who) ?? 0) + 1);
    }
    return [...n].map(([u, k]) => `${k} by ${u}`).join(", ") || "none";
  };
  const lines = [
    `${what}: claimstep's creates: ${creates.map(short).join(", ") || "none"}`,
    `${what}: claimstep's orphan delete: ${orphanDeletes.map(short).join(", ") || "none"}`,
    `${what}: claimstep's evictions (in order): ${evictions.map(short).join(", ") || "none"}`,
    ...(claimPatches.length
      ? [
          `${what}: claimstep's claim patches (the revision label; a removed template's claims: the orphaned-from label): ${claimPatches.map(short).join(", ")}`,
        ]
      : []),
    `${what}: the StatefulSet controller's creates: claims ${controllerClaimCreates.map((e) => e.name).join(", ") || "none"}; pods ${controllerPodCreates.map((e) => e.name).join(", ") || "none"}`,
    `${what}: pod deletes: ${podDeletes.length} (${by(podDeletes)}); claim deletes: ${claimDeletes.length} (by anyone)`,
  ];
  return {
    claimstepWrites,
    creates,
    orphanDeletes,
    evictions,
    claimPatches,
    controllerClaimCreates,
    controllerPodCreates,
    podDeletes,
    claimDeletes,
    lines,
  };
}

// ---------------------------------------------------------------------------------------------
// what the server holds, for a failure message (and the lead's report)

/** The set (uid, templates, partition, claimstep's annotations), its pods and claims, its events. */
export async function describeState(e2e: E2E, set: string): Promise<string> {
  const out: string[] = [];
  const s = await e2e.api.get("statefulsets", set);
  if (s.status !== 200) out.push(`StatefulSet ${set}: HTTP ${s.status}`);
  else {
    const b = s.body;
    const ann = Object.entries(b.metadata.annotations ?? {})
      .filter(([k]) => k.startsWith("claimstep.io/"))
      .map(([k, v]) => `${k}=${String(v).length > 120 ? `${String(v).slice(0, 120)}…` : v}`);
    out.push(
      `StatefulSet ${set} uid ${b.metadata.uid} gen ${b.metadata.generation} templates [${(b.spec.volumeClaimTemplates ?? []).map((t: any) => t.metadata.name).join(", ")}] mounts [${(b.spec.template.spec.containers[0].volumeMounts ?? []).map((m: any) => m.name).join(", ")}] updateStrategy ${JSON.stringify(b.spec.updateStrategy)} status ${JSON.stringify(b.status)}`,
      ...ann.map((a) => `  ${a}`),
    );
  }
  for (const p of await setPods(e2e, set))
    out.push(
      `pod ${p.metadata.name} ${p.metadata.uid} rev ${p.metadata.labels?.["controller-revision-hash"]} ${p.status?.phase}${isReady(p) ? " Ready" : ""}${p.metadata.deletionTimestamp ? " deleting" : ""} claims [${claimNamesOf(p).join(", ")}]`,
    );
  const claims = ok(await e2e.api.list("persistentvolumeclaims"), "list claims").items ?? [];
  for (const c of claims.filter((c: KubeObject) => new RegExp(`-${set}-\\d+$`).test(c.metadata.name ?? "")))
    out.push(
      `claim ${c.metadata.name} ${c.metadata.uid} ${c.status?.phase} ${c.status?.capacity?.storage ?? ""} labels ${JSON.stringify(c.metadata.labels ?? {})}${c.metadata.deletionTimestamp ? " deleting" : ""}`,
    );
  const events = ok(await e2e.api.list("events"), "list events").items ?? [];
  for (const e of events.filter((e: KubeObject) => (e.involvedObject?.name ?? "").startsWith(set)).slice(-20))
    out.push(
      `event ${e.involvedObject.kind}/${e.involvedObject.name} ${e.type} ${e.reason} ×${e.count ?? 1}: ${String(e.message ?? "").slice(0, 240)}`,
    );
  return out.join("\n");
}

/** A run's steps, one line each, consecutive repeats folded (`×n`). */
export function trailOf(steps: any[]): string {
  const lines = steps.map((s) => {
    const d = s.decision;
    const a = d.action
      ? ` → ${d.action.type}${d.action.pod ? ` ${d.action.pod}` : ""}${d.action.claim ? ` ${d.action.claim}` : ""}`
      : "";
    return `${d.phase}/${d.reason}${a}`;
  });
  const out: string[] = [];
  for (const l of lines) {
    const last = out.at(-1);
    const m = last ? /^(.*?)(?: ×(\d+))?$/.exec(last) : null;
    if (m && m[1] === l) out[out.length - 1] = `${l} ×${Number(m[2] ?? 1) + 1}`;
    else out.push(l);
  }
  return out.join(", ");
}
