// planStep: the single next safe action for one StatefulSet (DESIGN.md rules 1–14).
// Pure: a function of the snapshot and the time it is given.
import { makeDecision } from "./decision.js";
import type { ClaimTemplate, PersistentVolumeClaim, StatefulSet, StorageClass } from "./k8s.js";
import { parseQuantity, quantityString, toBytes } from "./quantity.js";
import { claimReadiness } from "./readiness.js";
import { revisionOf } from "./revision.js";
import { desiredTemplates } from "./templates.js";
import {
  Keys,
  type ClaimReadiness,
  type ClaimReport,
  type Decision,
  type EventReason,
  type OrdinalReport,
  type PatchClaim,
  type Snapshot,
} from "./types.js";

/** Why a claim cannot be written now (rule 6), predicted from the objects instead of provoked. */
interface Obstacle {
  phase: "Blocked" | "Waiting";
  reason: EventReason;
  message: string;
}

/** One claim of one ordinal, fully evaluated. */
interface ClaimPlan {
  report: ClaimReport;
  template: ClaimTemplate;
  pvc?: PersistentVolumeClaim;
  /** The claim still needs claimstep's apply (rule 7). */
  needsUpdate: boolean;
  /** At the revision and ready (rule 8). */
  done: boolean;
  /** Occupies a maxUnavailable slot: written by claimstep and not yet ready. */
  inFlight: boolean;
  obstacle?: Obstacle;
  patch?: PatchClaim;
}

interface OrdinalPlan {
  ordinal: number;
  claims: ClaimPlan[];
}

/** Effective class of a PVC: the beta annotation wins over spec.storageClassName, as in the API server. */
export function effectiveClass(pvc: PersistentVolumeClaim): string | undefined {
  return pvc.metadata.annotations?.[Keys.betaStorageClass] ?? pvc.spec.storageClassName ?? undefined;
}

/** spec.updateStrategy.rollingUpdate.maxUnavailable: int or percent of replicas rounded down, min 1. */
export function maxUnavailableOf(set: StatefulSet): number | { error: string } {
  const raw = set.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  const replicas = set.spec.replicas ?? 1;
  if (raw === undefined) return 1;
  if (typeof raw === "number") return Math.max(1, raw);
  const m = /^(\d+)%$/.exec(raw);
  if (m) return Math.max(1, Math.floor((replicas * Number(m[1])) / 100));
  if (/^\d+$/.test(raw)) return Math.max(1, Number(raw));
  return { error: `spec.updateStrategy.rollingUpdate.maxUnavailable ${JSON.stringify(raw)} is neither an integer nor a percentage` };
}

const canonicalJSON = (v: unknown): string =>
  JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : val,
  );

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

/** Immutable PVC spec fields the template sets and the claim differs on (rule 6). */
function immutableMismatches(t: ClaimTemplate, pvc: PersistentVolumeClaim): string[] {
  const out: string[] = [];
  const ts = t.spec;
  const ps = pvc.spec;
  if (ts.accessModes && !sameSet(ts.accessModes, ps.accessModes ?? [])) {
    out.push(`accessModes ${JSON.stringify(ps.accessModes ?? [])} → ${JSON.stringify(ts.accessModes)}`);
  }
  if (ts.volumeMode && (ps.volumeMode ?? "Filesystem") !== ts.volumeMode) out.push(`volumeMode ${ps.volumeMode ?? "Filesystem"} → ${ts.volumeMode}`);
  for (const field of ["selector", "dataSource", "dataSourceRef"] as const) {
    if (ts[field] && canonicalJSON(ts[field]) !== canonicalJSON(ps[field] ?? null)) out.push(field);
  }
  return out;
}

const hasAll = (have: Record<string, string> | undefined, want: Record<string, string> | undefined): boolean =>
  Object.entries(want ?? {}).every(([k, v]) => have?.[k] === v);

interface Context {
  setName: string;
  namespace: string;
  revision: string;
  classes: Map<string, StorageClass>;
  vacs: Set<string> | undefined;
  /** Claims with a deletionTimestamp, by name: treated as missing (rule 13), kept only to say so. */
  deleting: Map<string, PersistentVolumeClaim>;
}

function planClaim(ctx: Context, t: ClaimTemplate, ordinal: number, pvc: PersistentVolumeClaim | undefined): ClaimPlan {
  const name = `${t.metadata.name}-${ctx.setName}-${ordinal}`;
  const tplStorage = t.spec.resources!.requests!.storage!; // validated by desiredTemplates
  const tplBytes = toBytes(tplStorage);
  const vac = t.spec.volumeAttributesClassName ?? undefined;

  if (!pvc) {
    // Missing, or being deleted (rule 13): readiness says which.
    const readiness = claimReadiness(ctx.deleting.get(name), { storageBytes: tplBytes }, name);
    return {
      template: t,
      needsUpdate: false,
      done: false,
      inFlight: false,
      report: { template: t.metadata.name, claim: name, exists: false, target: tplStorage, readiness },
    };
  }

  // Rule 14: a JSON number is a quantity too (objects not parsed by the schemas may carry one).
  const rawSpec = pvc.spec.resources?.requests?.storage as string | number | undefined;
  let specStorage = rawSpec === undefined ? undefined : String(rawSpec);
  let specBytes = 0n;
  let badSpec: string | undefined;
  try {
    specStorage = rawSpec === undefined ? undefined : quantityString(rawSpec);
    specBytes = specStorage === undefined ? 0n : toBytes(specStorage);
  } catch (err) {
    badSpec = (err as Error).message;
  }
  // Rule 5: never ask for less than the claim already requests.
  const target = specStorage !== undefined && !badSpec && specBytes >= tplBytes ? specStorage : tplStorage;
  const required = specStorage !== undefined && !badSpec && specBytes < tplBytes ? specBytes : tplBytes;
  const labels = { ...(t.metadata.labels ?? {}), [Keys.revisionLabel]: ctx.revision };
  const atRevision = pvc.metadata.labels?.[Keys.revisionLabel] === ctx.revision;
  const needsExpand = specBytes < tplBytes;
  const needsUpdate =
    needsExpand ||
    (vac !== undefined && pvc.spec.volumeAttributesClassName !== vac) ||
    !hasAll(pvc.metadata.labels, labels) ||
    !hasAll(pvc.metadata.annotations, t.metadata.annotations);

  // Readiness at what the template asks (min(template, spec)), and the VAC it names.
  const readiness: ClaimReadiness = claimReadiness(pvc, { storageBytes: required, ...(vac ? { volumeAttributesClassName: vac } : {}) }, name);
  // A claim claimstep stamped earlier that is still settling its own request holds a slot too.
  const stamped = pvc.metadata.labels?.[Keys.revisionLabel] !== undefined;
  const settling =
    stamped && !atRevision && specStorage !== undefined && !badSpec
      ? claimReadiness(pvc, { storageBytes: specBytes, ...(pvc.spec.volumeAttributesClassName ? { volumeAttributesClassName: pvc.spec.volumeAttributesClassName } : {}) }, name)
      : undefined;
  const inFlight =
    (atRevision && !needsUpdate && readiness.state !== "Ready") ||
    (settling !== undefined && settling.state !== "Ready" && settling.state !== "Failed" && settling.state !== "NotBound");

  const report: ClaimReport = {
    template: t.metadata.name,
    claim: name,
    exists: true,
    ...(specStorage !== undefined ? { spec: specStorage } : {}),
    ...(pvc.status?.capacity?.storage !== undefined ? { capacity: pvc.status.capacity.storage } : {}),
    target,
    ...(vac !== undefined || pvc.status?.currentVolumeAttributesClassName
      ? {
          volumeAttributesClassName: {
            ...(vac !== undefined ? { desired: vac } : {}),
            ...(pvc.status?.currentVolumeAttributesClassName ? { current: pvc.status.currentVolumeAttributesClassName } : {}),
          },
        }
      : {}),
    ...(pvc.metadata.labels?.[Keys.revisionLabel] !== undefined ? { revision: pvc.metadata.labels[Keys.revisionLabel] } : {}),
    readiness: needsUpdate && readiness.state === "Ready" ? { state: "Behind", message: `${name}: not yet at revision ${ctx.revision}` } : readiness,
  };
  const plan: ClaimPlan = { report, template: t, pvc, needsUpdate: needsUpdate || !atRevision, done: atRevision && !needsUpdate && readiness.state === "Ready", inFlight };
  if (!plan.needsUpdate) return plan;

  // Rule 6: predict the API server's answer.
  const obstacle = obstacleOf(ctx, t, pvc, name, needsExpand, badSpec);
  if (obstacle) return { ...plan, obstacle };
  return {
    ...plan,
    patch: {
      type: "PatchClaim",
      namespace: ctx.namespace,
      claim: name,
      template: t.metadata.name,
      ordinal,
      storage: target,
      // SSA drops fields claimstep owned and omits: carry the claim's class rather than clear it.
      ...(vac !== undefined
        ? { volumeAttributesClassName: vac }
        : pvc.spec.volumeAttributesClassName
          ? { volumeAttributesClassName: pvc.spec.volumeAttributesClassName }
          : {}),
      labels,
      annotations: { ...(t.metadata.annotations ?? {}) },
      ...(pvc.metadata.uid !== undefined ? { uid: pvc.metadata.uid } : {}),
      ...(pvc.metadata.resourceVersion !== undefined ? { resourceVersion: pvc.metadata.resourceVersion } : {}),
    },
  };
}

function obstacleOf(ctx: Context, t: ClaimTemplate, pvc: PersistentVolumeClaim, name: string, needsExpand: boolean, badSpec: string | undefined): Obstacle | undefined {
  if (badSpec) return { phase: "Blocked", reason: "ApplyRejected", message: `${name}: spec.resources.requests.storage is unreadable: ${badSpec}` };
  const wantClass = t.spec.storageClassName ?? undefined;
  const haveClass = effectiveClass(pvc);
  if (wantClass !== undefined && wantClass !== haveClass) {
    return {
      phase: "Blocked",
      reason: "StorageClassMismatch",
      message: `${name} has storage class ${haveClass ?? "(none)"} but template "${t.metadata.name}" asks for ${wantClass}; the class of a claim is immutable. Restore storageClassName ${haveClass ?? "(unset)"} in the desired template, or migrate the data to a new claim by hand`,
    };
  }
  const immutable = immutableMismatches(t, pvc);
  if (immutable.length) {
    return {
      phase: "Blocked",
      reason: "ImmutableFieldMismatch",
      message: `${name}: template "${t.metadata.name}" changes immutable fields (${immutable.join("; ")}); only storage, volumeAttributesClassName, labels and annotations can change in place. Restore them in the desired template`,
    };
  }
  // The spec of an unbound claim is immutable: neither its request nor its VAC may change.
  const changesVac = t.spec.volumeAttributesClassName != null && pvc.spec.volumeAttributesClassName !== t.spec.volumeAttributesClassName;
  if ((needsExpand || changesVac) && pvc.status?.phase !== "Bound") {
    return {
      phase: "Waiting",
      reason: "ClaimNotBound",
      message: `${name} is ${pvc.status?.phase ?? "not Bound"}; only a Bound claim can be ${needsExpand ? "expanded" : "moved to another VolumeAttributesClass"}. Waiting for it to bind`,
    };
  }
  if (needsExpand) {
    const sc = haveClass !== undefined ? ctx.classes.get(haveClass) : undefined;
    if (!sc || sc.allowVolumeExpansion !== true) {
      return {
        phase: "Blocked",
        reason: "ExpansionNotAllowed",
        message: !haveClass
          ? `${name} has no storage class (statically provisioned); Kubernetes only expands dynamically provisioned claims`
          : !sc
            ? `${name}: StorageClass ${haveClass} does not exist, so the claim cannot be expanded`
            : `${name}: StorageClass ${haveClass} does not set allowVolumeExpansion: true. Set it (if the driver supports expansion) and the rollout continues`,
      };
    }
  }
  const vac = t.spec.volumeAttributesClassName ?? undefined;
  if (vac !== undefined && pvc.spec.volumeAttributesClassName !== vac && !ctx.vacs?.has(vac)) {
    return {
      phase: "Blocked",
      reason: "VolumeAttributesClassNotFound",
      message: ctx.vacs
        ? `${name}: VolumeAttributesClass ${vac} does not exist. Create it or fix volumeAttributesClassName in template "${t.metadata.name}"`
        : `${name}: template "${t.metadata.name}" names VolumeAttributesClass ${vac} but this cluster has no VolumeAttributesClass API (storage.k8s.io v1 or v1beta1)`,
    };
  }
  return undefined;
}

function ordinalReport(o: OrdinalPlan, pods: Map<string, { phase?: string }>, setName: string, state: OrdinalReport["state"]): OrdinalReport {
  const pod = `${setName}-${o.ordinal}`;
  const phase = pods.get(pod)?.phase;
  return { ordinal: o.ordinal, pod, ...(phase ? { podPhase: phase } : {}), state, claims: o.claims.map((c) => c.report) };
}

const stateOf = (o: OrdinalPlan): OrdinalReport["state"] => {
  if (o.claims.some((c) => c.obstacle?.phase === "Blocked" || c.report.readiness.state === "Failed")) return "Blocked";
  if (o.claims.every((c) => c.done)) return "Updated";
  if (o.claims.some((c) => c.needsUpdate || !c.report.exists)) return o.claims.some((c) => c.inFlight) ? "InFlight" : "Pending";
  return "InFlight";
};

const describe = (p: PatchClaim, pvc: PersistentVolumeClaim | undefined): string => {
  const changes: string[] = [];
  const spec = pvc?.spec.resources?.requests?.storage;
  if (spec !== p.storage) changes.push(`storage ${spec ?? "?"} → ${p.storage}`);
  if (p.volumeAttributesClassName !== undefined && pvc?.spec.volumeAttributesClassName !== p.volumeAttributesClassName) {
    changes.push(`volumeAttributesClassName ${pvc?.spec.volumeAttributesClassName ?? "(none)"} → ${p.volumeAttributesClassName}`);
  }
  return `${changes.length ? changes.join(", ") : "labels"}; revision ${p.labels[Keys.revisionLabel]}`;
};

/** Compute the single next safe step for one StatefulSet. */
export function planStep(snapshot: Snapshot, now: Date): Decision {
  const set = snapshot.statefulSet;
  const annotations = set.metadata.annotations ?? {};
  const strategy = annotations[Keys.strategy];
  const idle = (reason: string, message: string, record: boolean) =>
    makeDecision(snapshot, now, [], { phase: "Idle", reason, message, record });
  const invalid = (message: string) =>
    makeDecision(snapshot, now, [], {
      phase: "Blocked",
      reason: "InvalidTemplates",
      message,
      record: true,
      events: [{ type: "Warning", reason: "InvalidTemplates", action: "Block", note: message }],
    });

  // Rule 1.
  if (strategy === undefined || strategy === "OnClaimDelete") {
    return idle("NotOptedIn", `${Keys.strategy} is ${strategy ?? "not set"}; set it to InPlace to let claimstep update this set's claims`, false);
  }
  if (strategy !== "InPlace") {
    return invalid(`${Keys.strategy} is ${JSON.stringify(strategy)}; it must be InPlace or OnClaimDelete`);
  }
  if (set.spec.updateStrategy?.type === "OnDelete") {
    return idle("OnDelete", "spec.updateStrategy.type is OnDelete: claims are not updated automatically (as in KEP-4650); delete a pod's claim to recreate it from the template", true);
  }

  // Rule 2.
  const desired = desiredTemplates(set);
  const maxUnavailable = maxUnavailableOf(set);
  if (!desired.ok) return invalid(desired.message);
  if (typeof maxUnavailable !== "number") return invalid(maxUnavailable.error);
  const revision = revisionOf(desired.templates);

  // Rule 3: ordinals in scope, highest first; condemned ones are reported, never touched.
  const start = set.spec.ordinals?.start ?? 0;
  const replicas = set.spec.replicas ?? 1;
  const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  const first = start + Math.min(partition, replicas);
  const end = start + replicas;

  const ctx: Context = {
    setName: set.metadata.name,
    namespace: set.metadata.namespace ?? "default",
    revision,
    classes: new Map(snapshot.storageClasses.map((c) => [c.metadata.name, c])),
    vacs: snapshot.volumeAttributesClasses ? new Set(snapshot.volumeAttributesClasses.map((v) => v.metadata.name)) : undefined,
    deleting: new Map(),
  };
  // Rule 13: a claim with a deletionTimestamp is going away. It is left out of the index every
  // rule reads, so it is treated as missing: never written, never ready, never at the revision.
  const claims = new Map<string, PersistentVolumeClaim>();
  for (const c of snapshot.claims) {
    if (c.metadata.deletionTimestamp) ctx.deleting.set(c.metadata.name, c);
    else claims.set(c.metadata.name, c);
  }
  const pods = new Map(snapshot.pods.map((p) => [p.metadata.name, { ...(p.status?.phase ? { phase: p.status.phase } : {}) }]));

  const inScope: OrdinalPlan[] = [];
  for (let ordinal = end - 1; ordinal >= first; ordinal--) {
    inScope.push({ ordinal, claims: desired.templates.map((t) => planClaim(ctx, t, ordinal, claims.get(`${t.metadata.name}-${ctx.setName}-${ordinal}`))) });
  }
  const reports: OrdinalReport[] = inScope.map((o) => ordinalReport(o, pods, ctx.setName, stateOf(o)));
  for (let ordinal = first - 1; ordinal >= start; ordinal--) {
    reports.push(ordinalReport(reportOnly(ctx, desired.templates, ordinal, claims), pods, ctx.setName, "OutOfScope"));
  }
  for (const ordinal of condemnedOrdinals(snapshot.claims, desired.templates, ctx.setName, start, end)) {
    reports.push(ordinalReport(reportOnly(ctx, desired.templates, ordinal, claims), pods, ctx.setName, "Condemned"));
  }

  const decide = (parts: Omit<Parameters<typeof makeDecision>[3], "revision" | "record">) =>
    makeDecision(snapshot, now, reports, { ...parts, revision, record: true });

  // Rules 8–9: walk highest first; at most maxUnavailable ordinals in flight.
  // An ordinal holds a slot from its first claim at the revision until it is done: a half-updated
  // ordinal stays in flight even when the claims written so far are ready.
  const occupied = (o: OrdinalPlan) =>
    o.claims.some((c) => c.inFlight) || (o.claims.some((c) => c.report.revision === revision) && !o.claims.every((c) => c.done));
  const inFlight = inScope.filter(occupied).length;
  const waits: { ordinal: number; message: string; notBound: boolean }[] = [];
  let missing = 0;
  const deleting: string[] = [];
  let noSlot: number | undefined;
  for (const o of inScope) {
    // A claim claimstep already brought to the revision whose resize failed for good.
    const failed = o.claims.find((c) => !c.needsUpdate && c.report.readiness.state === "Failed");
    if (failed?.report.readiness.state === "Failed") {
      const { reason, message } = failed.report.readiness;
      return decide({ phase: "Blocked", reason, message, ordinal: o.ordinal, events: [{ type: "Warning", reason, action: "Block", note: message }] });
    }
    const blocked = o.claims.find((c) => c.obstacle);
    if (blocked?.obstacle) {
      const { phase, reason, message } = blocked.obstacle;
      return decide({ phase, reason, message, ordinal: o.ordinal, events: [{ type: "Warning", reason, action: phase === "Blocked" ? "Block" : "Wait", note: message }] });
    }
    const next = o.claims.find((c) => c.patch);
    if (next?.patch) {
      const started = occupied(o);
      if (started || inFlight < maxUnavailable) {
        const note = `${next.patch.claim}: ${describe(next.patch, next.pvc)}`;
        return decide({
          phase: "Progressing",
          reason: "ClaimUpdated",
          message: `updating ${note}`,
          ordinal: o.ordinal,
          action: next.patch,
          events: [{ type: "Normal", reason: "ClaimUpdated", action: "PatchClaim", note }],
        });
      }
      // No slot for this ordinal: a lower ordinal already in flight may still need its next claim.
      noSlot ??= o.ordinal;
      continue;
    }
    for (const c of o.claims) {
      const r = c.report.readiness;
      if (!c.report.exists) {
        missing++;
        if (ctx.deleting.has(c.report.claim)) deleting.push(c.report.readiness.state === "Missing" ? c.report.readiness.message : c.report.claim);
      }
      else if (!c.done && r.state !== "Ready") waits.push({ ordinal: o.ordinal, message: r.message, notBound: r.state === "NotBound" });
    }
  }

  if (noSlot !== undefined) {
    const head = waits[0];
    const message = `${head ? `${head.message}; ` : ""}ordinal ${noSlot} starts when ${inFlight === 1 ? "the ordinal in flight is" : `${inFlight - maxUnavailable + 1} of the ${inFlight} ordinals in flight ${inFlight - maxUnavailable + 1 === 1 ? "is" : "are"}`} ready (maxUnavailable ${maxUnavailable})`;
    return decide({
      phase: "Waiting",
      reason: "ClaimResizing",
      message,
      ordinal: head?.ordinal ?? noSlot,
      events: [{ type: "Normal", reason: "ClaimResizing", action: "Wait", note: message }],
    });
  }
  const head = waits[0];
  if (head) {
    const message = head.message;
    return decide({
      phase: "Waiting",
      reason: head.notBound ? "ClaimNotBound" : "ClaimResizing",
      message,
      ordinal: head.ordinal,
      events: [{ type: "Normal", reason: "ClaimResizing", action: "Wait", note: message }],
    });
  }
  if (missing) {
    return decide({
      phase: "Waiting",
      reason: "ClaimMissing",
      message: deleting.length
        ? `${deleting[0]}, then claimstep updates it${missing > 1 ? ` (${missing} claim(s) in scope are missing or being deleted)` : ""}`
        : `${missing} claim(s) in scope do not exist yet; the StatefulSet controller creates them, then claimstep updates them`,
    });
  }

  // Rule 10: every in-scope claim is at the revision and ready.
  const alreadyComplete = annotations[Keys.currentRevision] === revision;
  const message = `all ${inScope.length} ordinal(s) in scope are at revision ${revision} and ready`;
  return decide({
    phase: "Complete",
    reason: alreadyComplete ? "Converged" : "RolloutComplete",
    statusReason: "RolloutComplete",
    message,
    currentRevision: revision,
    events: alreadyComplete ? [] : [{ type: "Normal", reason: "RolloutComplete", action: "Complete", note: message }],
  });
}

function reportOnly(ctx: Context, templates: ClaimTemplate[], ordinal: number, claims: Map<string, PersistentVolumeClaim>): OrdinalPlan {
  return {
    ordinal,
    claims: templates.map((t) => {
      const name = `${t.metadata.name}-${ctx.setName}-${ordinal}`;
      const pvc = claims.get(name);
      const readiness = pvc
        ? claimReadiness(pvc, { storageBytes: safeBytes(pvc.spec.resources?.requests?.storage) }, name)
        : claimReadiness(ctx.deleting.get(name), { storageBytes: 0n }, name);
      const report: ClaimReport = {
        template: t.metadata.name,
        claim: name,
        exists: pvc !== undefined,
        ...(pvc?.spec.resources?.requests?.storage !== undefined ? { spec: pvc.spec.resources.requests.storage } : {}),
        ...(pvc?.status?.capacity?.storage !== undefined ? { capacity: pvc.status.capacity.storage } : {}),
        ...(pvc?.metadata.labels?.[Keys.revisionLabel] !== undefined ? { revision: pvc.metadata.labels[Keys.revisionLabel] } : {}),
        readiness,
      };
      return { report, template: t, needsUpdate: false, done: false, inFlight: false, ...(pvc ? { pvc } : {}) };
    }),
  };
}

const safeBytes = (q: string | number | undefined): bigint => {
  if (q === undefined) return 0n;
  try {
    return parseQuantity(q) >= 0n ? toBytes(q) : 0n;
  } catch {
    return 0n;
  }
};

/** Ordinals outside [start, end) that still have claims of this set (condemned, rule 3). */
function condemnedOrdinals(pvcs: PersistentVolumeClaim[], templates: ClaimTemplate[], setName: string, start: number, end: number): number[] {
  const found = new Set<number>();
  for (const pvc of pvcs) {
    for (const t of templates) {
      const prefix = `${t.metadata.name}-${setName}-`;
      const rest = pvc.metadata.name.startsWith(prefix) ? pvc.metadata.name.slice(prefix.length) : "";
      if (/^\d+$/.test(rest)) {
        const n = Number(rest);
        if (n < start || n >= end) found.add(n);
      }
    }
  }
  return [...found].sort((a, b) => b - a);
}

