// Helpers of the real-storage scenarios (test/e2e/storage/, issue 34): StatefulSets whose pods run
// on the real node (busybox from the node archive, never pulled) and write a known file on every
// volume when they first start; the files read back from the CSI hostpath driver's state directory
// on the host (one directory per volume handle) and compared by sha256; the claims' real resize and
// modify states; and a check that every time claimstep's status says Complete, no claim of the set
// still waits for its file system to grow.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SetWatch } from "./deployed.js";
import { type E2E, type KubeObject, ok, waitFor } from "./index.js";
import type { RealNodeInfo } from "./real-node.js";
import { K, ordinal } from "./scenario-templates.js";

export { K };

/** The file each pod writes once on each of its volumes (kept when the pod restarts). */
export const MARKER = "claimstep-marker";

export interface TemplateSpec {
  name: string;
  size: string;
  vac?: string;
}

export interface RealSetOptions {
  templates: TemplateSpec[];
  replicas?: number;
  policy?: "OrderedReady" | "Parallel";
  annotations?: Record<string, string>;
  /** persistentVolumeClaimRetentionPolicy.whenDeleted; "Delete" makes a re-create that lets the
   * claims go (Background propagation) lose the data, which the checksums then catch. */
  whenDeleted?: "Delete" | "Retain";
}

export const realTemplate = (node: RealNodeInfo, t: TemplateSpec) => ({
  metadata: { name: t.name },
  spec: {
    accessModes: ["ReadWriteOnce"],
    storageClassName: node.storageClass,
    resources: { requests: { storage: t.size } },
    ...(t.vac ? { volumeAttributesClassName: t.vac } : {}),
  },
});

/** Where a volume may be mounted: the container writes a marker on each of these that is mounted,
 * so a template added later (`claimstep set … --add --mount-path /logs`) gets one too. */
export const MOUNT_POINTS = ["/data", "/logs", "/cache", "/wal"];

/** The container: writes `<pod> <mount> <random>` to MARKER on each mounted volume unless it is
 * there, then waits; exits at once on SIGTERM (busybox sh ignores it while in `sleep`, so it sleeps
 * in steps). Ready once every mounted volume has its marker. */
export function realContainer(node: RealNodeInfo, templates: string[]) {
  const mounted = (m: string) => `grep -q " ${m} " /proc/mounts`;
  const write = MOUNT_POINTS.map(
    (m) =>
      `if ${mounted(m)} && [ ! -f ${m}/${MARKER} ]; then echo "$HOSTNAME ${m} $(cat /proc/sys/kernel/random/uuid)" > ${m}/${MARKER}.tmp && mv -f ${m}/${MARKER}.tmp ${m}/${MARKER}; fi;`,
  ).join(" ");
  const check = MOUNT_POINTS.map((m) => `{ ! ${mounted(m)} || [ -f ${m}/${MARKER} ]; }`).join(" && ");
  return {
    name: "app",
    image: node.image,
    imagePullPolicy: "Never",
    command: ["sh", "-c", `${write} trap 'exit 0' TERM; while true; do sleep 1; done`],
    volumeMounts: templates.map((t) => ({ name: t, mountPath: `/${t}` })),
    // Ready once every marker is on disk: the data the scenario checks exists before any change.
    readinessProbe: { exec: { command: ["sh", "-c", check] }, periodSeconds: 1 },
  };
}

export function realSetManifest(node: RealNodeInfo, name: string, o: RealSetOptions): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, annotations: o.annotations ?? { [K.strategy]: "InPlace" } },
    spec: {
      replicas: o.replicas ?? 3,
      serviceName: name,
      podManagementPolicy: o.policy ?? "OrderedReady",
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: o.whenDeleted ?? "Retain", whenScaled: "Retain" },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 2,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          containers: [
            realContainer(
              node,
              o.templates.map((t) => t.name),
            ),
          ],
        },
      },
      volumeClaimTemplates: o.templates.map((t) => realTemplate(node, t)),
    },
  };
}

const podRe = (set: string) => new RegExp(`^${set}-(\\d+)$`);
export async function podsOfSet(e2e: E2E, set: string): Promise<KubeObject[]> {
  const items = ok(await e2e.api.list("pods"), "list pods").items ?? [];
  return items
    .filter((p: KubeObject) => podRe(set).test(p.metadata.name ?? ""))
    .sort((a: KubeObject, b: KubeObject) => ordinal(a.metadata.name!) - ordinal(b.metadata.name!));
}

/** The set's claims of every template named, sorted by name. */
export async function claimsOfSet(e2e: E2E, set: string, templates: string[]): Promise<KubeObject[]> {
  const res = templates.map((t) => new RegExp(`^${t}-${set}-\\d+$`));
  const items = ok(await e2e.api.list("persistentvolumeclaims"), "list claims").items ?? [];
  return items
    .filter((c: KubeObject) => res.some((re) => re.test(c.metadata.name ?? "")))
    .sort((a: KubeObject, b: KubeObject) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
}

export const isPodReady = (p: KubeObject) =>
  !p.metadata.deletionTimestamp &&
  p.status?.phase === "Running" &&
  (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True");

/** Creates the set and waits until every pod is Ready (its markers written) and every claim Bound. */
export async function createRealSet(e2e: E2E, name: string, o: RealSetOptions): Promise<KubeObject> {
  const node = e2e.info.realNode!;
  const replicas = o.replicas ?? 3;
  ok(await e2e.api.create("statefulsets", realSetManifest(node, name, o)), `create StatefulSet ${name}`);
  await waitFor(
    async () => {
      const s = (await e2e.api.get("statefulsets", name)).body;
      const pods = await podsOfSet(e2e, name);
      const claims = await claimsOfSet(
        e2e,
        name,
        o.templates.map((t) => t.name),
      );
      return (
        s.status?.readyReplicas === replicas &&
        s.status?.observedGeneration === s.metadata.generation &&
        pods.filter(isPodReady).length === replicas &&
        claims.length === replicas * o.templates.length &&
        claims.every((c) => c.status?.phase === "Bound")
      );
    },
    { timeoutMs: 90_000, intervalMs: 500, what: `StatefulSet ${name}: ${replicas} pods Ready on the real node` },
  );
  return ok(await e2e.api.get("statefulsets", name), `get ${name}`);
}

// ---------------------------------------------------------------------------------------------
// the data on the volumes

export interface VolumeData {
  claimUid: string;
  volume: string;
  /** sha256 of the marker file, read on the host from the driver's state directory. */
  sha256: string;
  content: string;
}

/** Each claim's marker file, read from the volume's directory under the driver's state dir. */
export async function volumeData(e2e: E2E, claims: KubeObject[]): Promise<Record<string, VolumeData>> {
  const node = e2e.info.realNode!;
  const out: Record<string, VolumeData> = {};
  for (const c of claims) {
    const volume = c.spec?.volumeName as string | undefined;
    if (!volume) throw new Error(`claim ${c.metadata.name} is not bound to a volume`);
    const pv = ok(await e2e.admin.get("persistentvolumes", null, volume), `get PersistentVolume ${volume}`);
    const handle = pv.spec?.csi?.volumeHandle as string;
    const file = join(node.stateDir, handle, MARKER);
    if (!existsSync(file))
      throw new Error(
        `claim ${c.metadata.name}: no ${MARKER} in its volume ${volume} (${join(node.stateDir, handle)})`,
      );
    const content = readFileSync(file, "utf8");
    out[c.metadata.name!] = {
      claimUid: c.metadata.uid!,
      volume,
      sha256: createHash("sha256").update(content).digest("hex"),
      content: content.trim(),
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// the claims' real states

/** What is still pending on a claim: [] when its resize and modify are done. */
export function pendingOn(c: KubeObject): string[] {
  const s = c.status ?? {};
  const out: string[] = [];
  const alloc = s.allocatedResourceStatuses?.storage;
  if (alloc) out.push(`allocatedResourceStatuses.storage=${alloc}`);
  for (const cond of s.conditions ?? [])
    if (cond.status === "True" && cond.type !== "ModifyVolumeError" && cond.type !== "ControllerResizeError")
      out.push(`condition ${cond.type}`);
  if (s.modifyVolumeStatus) out.push(`modifyVolumeStatus=${s.modifyVolumeStatus.status}`);
  return out;
}

export const claimLine = (c: KubeObject) =>
  `${c.metadata.name} uid ${String(c.metadata.uid).slice(0, 8)} request ${c.spec?.resources?.requests?.storage} capacity ${c.status?.capacity?.storage ?? "-"} vac ${c.spec?.volumeAttributesClassName ?? "-"}/${c.status?.currentVolumeAttributesClassName ?? "-"} ${pendingOn(c).join(", ") || "settled"}`;

export interface CompleteCheck {
  /** Each time the set's status turned Complete: the claims as read right then. */
  readonly sightings: { at: number; claims: string[]; violations: string[] }[];
  readonly violations: string[];
  /** With `podsReady: false`: the Complete sightings with a pod not Ready (reported, not violations). */
  readonly notReady: string[];
  settled(): Promise<void>;
}

const UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, "": 1 };
const bytes = (q: string | undefined): number => {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|)$/.exec(q ?? "");
  return m ? Number(m[1]) * UNITS[m[2]!]! : Number.NaN;
};

/** The sizes the set asks for at this version of it: claimstep's desired templates, else the spec's. */
function desiredOf(set: KubeObject): Record<string, { size: string; vac?: string }> {
  let templates: KubeObject[] = set.spec?.volumeClaimTemplates ?? [];
  const raw = set.metadata.annotations?.[K.templates];
  if (raw) {
    try {
      templates = JSON.parse(raw);
    } catch {
      /* the spec's then */
    }
  }
  return Object.fromEntries(
    templates.map((t) => [
      t.metadata.name!,
      { size: t.spec?.resources?.requests?.storage, vac: t.spec?.volumeAttributesClassName ?? undefined },
    ]),
  );
}

/**
 * Every time claimstep's status of `set` turns Complete, read the set's claims at once: a claim
 * below the size (or on another VolumeAttributesClass than) that version of the set asks for, or with a resize still pending
 * (FileSystemResizePending, NodeResizePending, …), or a pod missing, not Ready or not mounting
 * exactly the set's templates' claims, is a violation — claimstep said Complete for what was not done.
 */
export function checkCompleteIsTrue(
  e2e: E2E,
  watch: SetWatch,
  set: string,
  templates: string[],
  o: { podsReady?: boolean } = {},
): CompleteCheck {
  const sightings: CompleteCheck["sightings"] = [];
  const violations: string[] = [];
  const notReady: string[] = [];
  const pending: Promise<void>[] = [];
  // The status as last seen: a Complete written before now (and carried by a person's later edit of
  // the set) is not a new claim of claimstep's; only a change to Complete is checked.
  let last = watch.trail.filter((t) => t.name === set).at(-1)?.status;
  watch.onEvent((s, obj) => {
    if (s.name !== set) return;
    const complete = s.status?.startsWith("Complete/") ?? false;
    if (complete && last !== s.status && !s.deleting) {
      const want = desiredOf(obj);
      pending.push(
        (async () => {
          const claims = await claimsOfSet(e2e, set, templates);
          const v: string[] = [];
          for (const c of claims) {
            const tpl = templates.find((t) => c.metadata.name!.startsWith(`${t}-${set}-`))!;
            if (!(tpl in want)) continue; // a removed template's claims: kept, not the rollout's
            const p = pendingOn(c);
            if (p.length) v.push(`${c.metadata.name}: ${p.join(", ")}`);
            const w = want[tpl]!;
            if (!(bytes(c.status?.capacity?.storage) >= bytes(w.size)))
              v.push(`${c.metadata.name}: capacity ${c.status?.capacity?.storage}, the set asks for ${w.size}`);
            if (w.vac && c.status?.currentVolumeAttributesClassName !== w.vac)
              v.push(
                `${c.metadata.name}: VolumeAttributesClass ${c.status?.currentVolumeAttributesClassName ?? "none"}, the set asks for ${w.vac}`,
              );
          }
          // Complete also means every pod runs mounting the claims of every template the set asks for.
          const replicas = obj.spec?.replicas ?? 1;
          const pods = await podsOfSet(e2e, set);
          for (let i = 0; i < replicas; i++) {
            const pod = pods.find((p) => p.metadata.name === `${set}-${i}`);
            if (!pod) {
              v.push(`pod ${set}-${i}: missing`);
              continue;
            }
            if (!isPodReady(pod)) {
              if (o.podsReady !== false) v.push(`pod ${set}-${i}: not Ready`);
              else notReady.push(`Complete at ${new Date(s.at).toISOString()} while pod ${set}-${i} was not Ready`);
            }
            const mounted = (pod.spec?.volumes ?? []).map(
              (x: { persistentVolumeClaim?: { claimName?: string } }) => x.persistentVolumeClaim?.claimName,
            );
            for (const t of Object.keys(want))
              if (!mounted.includes(`${t}-${set}-${i}`)) v.push(`pod ${set}-${i}: does not mount ${t}-${set}-${i}`);
            for (const c of mounted)
              if (c && !Object.keys(want).some((t) => c === `${t}-${set}-${i}`))
                v.push(`pod ${set}-${i}: still mounts ${c}, of a template the set no longer has`);
          }
          sightings.push({ at: s.at, claims: claims.map(claimLine), violations: v });
          violations.push(...v.map((x) => `Complete at ${new Date(s.at).toISOString()} while ${x}`));
        })(),
      );
    }
    last = s.status;
  });
  return { sightings, violations, notReady, settled: async () => void (await Promise.all(pending)) };
}
// ---------------------------------------------------------------------------------------------
// claimstep's status and the node's processes

export interface ClaimstepStatus {
  phase?: string;
  reason?: string;
  message?: string;
}

export const statusOf = (set: KubeObject): ClaimstepStatus => {
  try {
    return JSON.parse(set.metadata.annotations?.["claimstep.io/status"] ?? "{}");
  } catch {
    return {};
  }
};

/** Waits until `done(set)` holds for the live set; the failure names the status and every claim. */
export async function waitSet(
  e2e: E2E,
  set: string,
  templates: string[],
  what: string,
  done: (live: KubeObject) => boolean | Promise<boolean>,
  timeoutMs = 180_000,
): Promise<KubeObject> {
  let live: KubeObject | undefined;
  await waitFor(
    async () => {
      const r = await e2e.api.get("statefulsets", set);
      if (r.status !== 200) return false;
      live = r.body;
      return done(r.body);
    },
    { timeoutMs, intervalMs: 500, what: `${set}: ${what}` },
  ).catch(async (e) => {
    const claims = await claimsOfSet(e2e, set, templates);
    throw new Error(
      `${(e as Error).message}\nclaimstep's status ${JSON.stringify(live ? statusOf(live) : "(set missing)")}\n${claims.map(claimLine).join("\n")}`,
    );
  });
  return live!;
}

/** The pid up.sh recorded for one of the node's processes (e.g. "csi-resizer"). */
export function nodeProcess(e2e: E2E, name: string): number {
  const pids = readFileSync(join(e2e.info.realNode!.workdir, "run/pids"), "utf8");
  const line = pids.split("\n").find((l) => l.split(" ")[0] === name);
  if (!line) throw new Error(`the real node has no process ${name} (run/pids: ${pids.replace(/\n/g, ", ")})`);
  return Number(line.split(" ")[1]);
}
