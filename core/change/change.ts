// The desired change (issue 38 point 2): one pure function behind every door that changes a set's
// claim templates — `claimstep set` (a claim's size or class with its --hold-pods, --add,
// --remove), the HTTP templates route (a templates document) and the admission webhook (an
// update's new spec). (live set, request) → the annotations to write, those to remove, the
// partition hold, the warnings to say; or the refusal. Each door is encoding around it: the
// webhook's AdmissionReview and JSONPatch (core/change/admission.ts), set's output and patch, the
// route's JSON. The merge, add and remove of templates are core/change/desired.ts's. The GitOps
// writer is no door of it: it writes the planner's actions, not a request (docs/architecture.md).

import { Keys } from "../keys.js";
import { sameJson } from "../kube/json.js";
import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { parseQuantity } from "../kube/quantity.js";
import { revisionOf } from "../kube/revision.js";
import { sizeChangeOf } from "../plan/claims.js";
import { podCoordinationOf, rawAnnotation, removeListOf } from "../policy/annotations.js";
import { holdOf, type PartitionHold, userPartitionRecord } from "../policy/partition-hold.js";
import { holdPods } from "../policy/pod-policy.js";
import { finalizeForOf } from "../policy/records.js";
import { podTemplateDigest } from "../policy/shape.js";
import { desiredTemplates } from "../policy/templates.js";
import {
  type ClaimEdit,
  claimEdit,
  desiredChange,
  recreateFor,
  type TemplateAddOptions,
  templateAdd,
  templateRemove,
} from "./desired.js";
import { recreateOutlook } from "./outlook.js";

/** A set as an update carries it (its name may be absent): what the webhook's change reads of the new object. */
export interface SetLike {
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { volumeClaimTemplates?: unknown[]; [k: string]: unknown };
}

/** What a door asks. */
export type ChangeRequest =
  /** The templates route: templates merged by name into the desired ones. */
  | { kind: "templates"; templates: readonly ClaimTemplate[] }
  /**
   * `claimstep set <set> <claim> --storage/--vac`; `holdPods`: its --hold-pods (P5), the partition
   * held with ClaimsFirst and the user's partition recorded in the same write.
   */
  | { kind: "claim"; claim: string; edit: ClaimEdit; holdPods?: boolean }
  /** `claimstep set <set> <template> --add`. */
  | { kind: "add"; template: ClaimTemplate; options: TemplateAddOptions }
  /** `claimstep set <set> <template> --remove`. */
  | { kind: "remove"; template: string }
  /**
   * The webhook: an update of the live (stored) set whose spec asks for `requested` (its templates
   * without the server's fields); `update` the update's object; the set named `name` (`ns/name`)
   * and `setName` in messages.
   */
  | { kind: "spec"; update: SetLike; requested: ClaimTemplate[]; name: string; setName: string };

export type Change =
  | {
      ok: true;
      /** The desired templates after the change. */
      templates: ClaimTemplate[];
      revision: string;
      /** Annotations to write (merged into the set's). */
      annotations: Record<string, string>;
      /** Annotations to remove (only those the set carries). */
      removals: string[];
      /**
       * The partition hold written with them, when the change holds the pods (`annotations` then
       * carry ClaimsFirst and the user's partition recorded, when it is not already).
       */
      hold?: PartitionHold;
      /** The pod template this change holds for the re-create (`claimstep.io/pod-template`). */
      podTemplate?: unknown;
      /** The containers whose mounts this change edits in the held pod template. */
      containers: string[];
      /** What claimstep will do, said before it happens. */
      warnings: string[];
      /** Whether anything is written (set and the route skip an unchanged write; the webhook always patches). */
      changed: boolean;
    }
  | { ok: false; message: string };

/** The desired change `request` asks of the live set. */
export function changeOf(live: StatefulSet, request: ChangeRequest): Change {
  switch (request.kind) {
    case "templates":
    case "claim": {
      const change =
        request.kind === "templates"
          ? desiredChange(live, request.templates)
          : claimEdit(live, request.claim, request.edit);
      // P5 (set --hold-pods): one patch writes the templates, the hold and what the hold records.
      const held = request.kind === "claim" && request.holdPods && holdPods(live);
      if (held && change.ok) Object.assign(change.annotations, held.annotations);
      return change.ok
        ? { ...change, ...(held && { hold: held.hold }), removals: [], containers: [], warnings: [] }
        : change;
    }
    case "add":
    case "remove": {
      const change =
        request.kind === "add"
          ? templateAdd(live, request.template, request.options)
          : templateRemove(live, request.template);
      return change.ok ? { ...change, removals: [], warnings: [] } : change;
    }
    case "spec":
      return specChange(live, request);
  }
}

/**
 * Kubernetes' limit on the total size of an object's annotations, keys and values in bytes
 * (apimachinery's TotalAnnotationSizeLimitB): a patch that goes over it is refused by the API
 * server, so claimstep refuses the update itself, saying which of its annotations and the fix.
 */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/** UTF-8 bytes of a string, as Go's len() counts the API server's limits. */
export const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;

/**
 * An update's new spec: the stored templates stay in spec (so the API server accepts the update)
 * and the requested ones go into claimstep.io/volume-claim-templates; an update that adds or
 * removes a template also lists the removed names and holds back its pod template change.
 */
function specChange(base: StatefulSet, request: Extract<ChangeRequest, { kind: "spec" }>): Change {
  const { update, requested, name, setName } = request;
  const stored = base.spec.volumeClaimTemplates ?? [];
  const names = (ts: readonly ClaimTemplate[]) =>
    ts
      .map((t) => t.metadata.name)
      .sort()
      .join(",");
  const namesChanged = names(requested) !== names(stored);
  if (namesChanged || pendingTemplateSetChange(base, stored)) return templateSetChange(base, request, namesChanged);

  const change = desiredChange(base, requested);
  if (!change.ok) return { ok: false, message: `claimstep: ${change.message}` };

  const annotations: Record<string, string> = {
    [Keys.templates]: JSON.stringify(change.templates),
    [Keys.strategy]: "InPlace",
  };
  // Templates moved here are re-created into spec once complete, so that Git and the set agree,
  // unless the set says otherwise: a Recreate claimstep writes names the revision it is for
  // (claimstep.io/finalize-for), and a Recreate claimstep wrote before is written for this one.
  if (claimstepsFinalize(update)) Object.assign(annotations, recreateFor(update, change.revision));
  const warnings = changeWarnings(setName, stored, change.templates);
  // Said before it happens: the change ends in a re-create (and why), or a Recreate claimstep wrote is spent.
  const outlook = recreateOutlook(storedWith(base, update, annotations, []));
  if (outlook) warnings.push(`claimstep: ${outlook.text}`);
  if (!warnings.length)
    warnings.push(
      `claimstep recorded the claim templates of ${name} in ${Keys.templates}; see \`claimstep status ${setName}\``,
    );
  // ClaimsFirst with a pod template change in the same request (docs/pods.md P5): the StatefulSet
  // controller would replace the pods as soon as this update is stored, before any claim grows;
  // hold them here, as `claimstep set --hold-pods` does, and the planner lowers the partition one
  // ordinal at a time once its claims are ready, then restores the user's (found on the real
  // server, test/e2e/admission.test.ts: without it every pod ran the new image on the old disk).
  const hold = claimsFirstHold(update, base);
  if (hold) {
    Object.assign(annotations, userPartitionRecord(hold));
    warnings.push(
      `claimstep holds the pods of ${name} (partition ${hold.partition}) and replaces each once its claims are ready (${Keys.podCoordination}: ClaimsFirst)`,
    );
  }
  return within(name, update, {
    ok: true,
    templates: change.templates,
    revision: change.revision,
    annotations,
    removals: [],
    ...(hold ? { hold } : {}),
    containers: [],
    warnings,
    changed: true,
  });
}

/**
 * The change, or a refusal when the set's annotations with it would exceed ANNOTATIONS_MAX_BYTES
 * (the API server would refuse the patched object).
 */
function within(name: string, update: SetLike, change: Extract<Change, { ok: true }>): Change {
  const after: Record<string, string> = { ...update.metadata.annotations, ...change.annotations };
  for (const key of change.removals) delete after[key];
  let total = 0;
  for (const [k, v] of Object.entries(after)) total += utf8Bytes(k) + utf8Bytes(v);
  if (total <= ANNOTATIONS_MAX_BYTES) return change;
  const limit = `over Kubernetes' limit of ${ANNOTATIONS_MAX_BYTES} bytes (256 KiB); nothing was written`;
  const held = change.podTemplate === undefined ? undefined : JSON.stringify(change.podTemplate);
  return {
    ok: false,
    message:
      held !== undefined
        ? `claimstep: StatefulSet ${name}: holding back the pod template change in ${Keys.podTemplate} (${utf8Bytes(held)} bytes) would bring the set's annotations to ${total} bytes, ${limit}. Fix: apply the claim template change without the pod template change first, then the pod template change once claimstep has re-created the set (\`claimstep status\` says Complete)`
        : `claimstep: StatefulSet ${name}: writing the requested claim templates into ${Keys.templates} (${utf8Bytes(JSON.stringify(change.templates))} bytes) would bring the set's annotations to ${total} bytes, ${limit}. Fix: make the set's other annotations smaller (kubectl's last-applied-configuration copies the whole manifest: \`kubectl apply --server-side\` does not)`,
  };
}

/** The set has an addition (a desired template the live set lacks) or a removal (a live template listed) pending. */
function pendingTemplateSetChange(set: StatefulSet, stored: readonly ClaimTemplate[]): boolean {
  const live = new Set(stored.map((t) => t.metadata.name));
  const desired = desiredTemplates(set);
  if (desired.ok && desired.templates.some((t) => !live.has(t.metadata.name))) return true;
  const listed = removeListOf(set, { lenient: true });
  return (listed.ok ? listed.value : []).some((n) => live.has(n));
}

/** "the claim template logs" / "the claim templates logs, wal" */
const templatesNamed = (ns: readonly string[]) => `the claim template${ns.length === 1 ? "" : "s"} ${ns.join(", ")}`;

const podTemplateOfSet = (s: SetLike | StatefulSet): unknown => (s.spec as { template?: unknown }).template;

/**
 * An update that adds or removes claim templates (issue 27, docs/admission.md): the requested
 * templates, the names to remove and the held pod template in claimstep's annotations, for the
 * re-create (finalize) to apply in one create. `namesChanged`: the request's names differ from the
 * live set's (else it only undoes a pending addition or removal).
 */
function templateSetChange(
  base: StatefulSet,
  { update, requested, name, setName }: Extract<ChangeRequest, { kind: "spec" }>,
  namesChanged: boolean,
): Change {
  const stored = base.spec.volumeClaimTemplates ?? [];
  const seen = new Set<string>();
  for (const t of requested) {
    if (seen.has(t.metadata.name))
      return {
        ok: false,
        message: `claimstep: spec.volumeClaimTemplates of StatefulSet ${name} names the claim template "${t.metadata.name}" twice; give each template a name of its own`,
      };
    seen.add(t.metadata.name);
  }
  const templatesJson = JSON.stringify(requested);
  // Validated as the planner will read them (storage given, positive, not absurd).
  const check = desiredTemplates({
    ...base,
    metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, [Keys.templates]: templatesJson } },
  });
  if (!check.ok) return { ok: false, message: `claimstep: ${check.message}` };

  const live = stored.map((t) => t.metadata.name);
  const liveNames = new Set(live);
  const wanted = new Set(requested.map((t) => t.metadata.name));
  const added = requested.map((t) => t.metadata.name).filter((n) => !liveNames.has(n));
  const dropped = live.filter((n) => !wanted.has(n));
  const oldList = removeListOf(base, { lenient: true });
  const listed = oldList.ok ? oldList.value : undefined;
  const removing = [...new Set([...(listed ?? []), ...dropped])].filter((n) => !wanted.has(n)).sort();
  const broughtBack = [...new Set(listed ?? [])].filter((n) => wanted.has(n)).sort();
  const pendingAdds: string[] = [];
  const oldDesired = desiredTemplates(base);
  if (oldDesired.ok && oldDesired.source === "annotation")
    for (const t of oldDesired.templates)
      if (!liveNames.has(t.metadata.name) && !wanted.has(t.metadata.name)) pendingAdds.push(t.metadata.name);

  const warnings = namesWarnings({ added, dropped, broughtBack, pendingAdds, oldList }, name, setName);
  warnings.push(...changeWarnings(setName, stored, requested));

  const annotations: Record<string, string> = { [Keys.templates]: templatesJson, [Keys.strategy]: "InPlace" };
  const removals: string[] = [];
  if (removing.length) annotations[Keys.removeTemplates] = JSON.stringify(removing);
  else removals.push(Keys.removeTemplates);

  const podTemplate = holdPodTemplate(base, update, name, namesChanged, { annotations, removals, warnings });
  // Templates moved here are re-created into spec once complete (as for any template change).
  const finalize = rawAnnotation(update.metadata.annotations, "finalize");
  const recreates = added.length > 0 || removing.some((n) => liveNames.has(n));
  const revision = revisionOf(requested);
  if (claimstepsFinalize(update)) Object.assign(annotations, recreateFor(update, revision));
  if (!recreates) {
    if (!warnings.length)
      warnings.push(
        `claimstep recorded the claim templates of ${name} in ${Keys.templates}; see \`claimstep status ${setName}\``,
      );
  } else if (finalize === undefined || finalize === "Recreate") {
    // Said before it happens: the re-create, when, and why (who wrote Recreate, and for how long).
    const outlook = recreateOutlook(storedWith(base, update, annotations, removals));
    if (outlook) warnings.push(`claimstep: ${outlook.text}`);
  } else {
    const ns = name.slice(0, name.indexOf("/"));
    warnings.push(
      `StatefulSet ${name} says ${Keys.finalize}: ${finalize}; adding or removing a claim template needs the set re-created: the change waits until you set ${Keys.finalize}: Recreate (\`kubectl annotate sts -n ${ns} ${setName} ${Keys.finalize}=Recreate --overwrite\`) or run \`claimstep finalize ${setName}\``,
    );
  }
  return within(name, update, {
    ok: true,
    templates: requested,
    revision,
    annotations,
    removals,
    ...(podTemplate !== undefined ? { podTemplate } : {}),
    containers: [],
    warnings,
    changed: true,
  });
}

/** The set as stored once the change applied: the stored templates, the update's annotations with claimstep's. */
function storedWith(
  base: StatefulSet,
  update: SetLike,
  annotations: Record<string, string>,
  removals: readonly string[],
): StatefulSet {
  const after: Record<string, string> = { ...update.metadata.annotations, ...annotations };
  for (const key of removals) delete after[key];
  return { ...base, metadata: { ...base.metadata, annotations: after } };
}

/** `claimstep.io/finalize` is absent, or a Recreate claimstep wrote (with `claimstep.io/finalize-for`): the webhook writes it for each change. */
const claimstepsFinalize = (set: SetLike): boolean => {
  const finalize = rawAnnotation(set.metadata.annotations, "finalize");
  return finalize === undefined || (finalize === "Recreate" && finalizeForOf(set) !== undefined);
};

/** The partition hold of a ClaimsFirst set whose pod template changes in the same update (RollingUpdate only), or undefined. */
function claimsFirstHold(update: SetLike, stored: StatefulSet): PartitionHold | undefined {
  const coordination = podCoordinationOf(update as Pick<StatefulSet, "metadata">);
  if (!coordination.ok || coordination.value !== "ClaimsFirst") return undefined;
  const type = (update.spec.updateStrategy as { type?: string } | undefined)?.type;
  if (type !== undefined && type !== "RollingUpdate") return undefined;
  if (sameJson(podTemplateOfSet(update) ?? null, podTemplateOfSet(stored) ?? null)) return undefined;
  const hold = holdOf(update);
  return hold.partition === hold.from ? undefined : hold;
}

/** What claimstep will do, one short warning per template that changes (kubectl prints each). */
function changeWarnings(
  setName: string,
  stored: readonly ClaimTemplate[],
  desired: readonly ClaimTemplate[],
): string[] {
  const out: string[] = [];
  const byName = firstByName(stored);
  for (const d of desired) {
    const s = byName.get(d.metadata.name);
    if (!s) continue;
    const claims = `${d.metadata.name}-${setName}-*`;
    const from = s.spec.resources?.requests?.storage;
    const to = d.spec.resources?.requests?.storage;
    if (from !== undefined && to !== undefined && String(from) !== String(to)) {
      out.push(
        // Rule 5 (core/plan/claims.ts sizeChangeOf): only a larger template grows the claims.
        sizeChangeOf(parseQuantity(String(to)), { request: parseQuantity(String(from)) }) === "grow"
          ? `claimstep will grow ${claims} to ${to} one ordinal at a time; see \`claimstep status ${setName}\``
          : // X1: the webhook sees no claim, so it says both outcomes; the planner picks per claim.
            `claimstep: ${claims} stay at ${from} (claims never shrink), but one whose expansion to ${from} failed comes back down to ${to} if that is above its capacity (X1); the smaller template ${to} applies to new claims after the re-create`,
      );
    }
    if ((s.spec.volumeAttributesClassName ?? "") !== (d.spec.volumeAttributesClassName ?? "")) {
      out.push(
        `claimstep will move ${claims} to VolumeAttributesClass ${d.spec.volumeAttributesClassName ?? "(none)"} one ordinal at a time; see \`claimstep status ${setName}\``,
      );
    }
    if (!sameJson(s.metadata.labels ?? {}, d.metadata.labels ?? {}))
      out.push(`claimstep will relabel ${claims} one ordinal at a time`);
  }
  return out;
}

/** Templates by name, the first of a name winning (as `find` does). */
function firstByName(ts: readonly ClaimTemplate[]): Map<string, ClaimTemplate> {
  const out = new Map<string, ClaimTemplate>();
  for (const t of ts) if (!out.has(t.metadata.name)) out.set(t.metadata.name, t);
  return out;
}

/** What an update adding or removing templates says of the names: added, removed, brought back, no longer added, a bad list replaced. */
function namesWarnings(
  n: {
    added: readonly string[];
    dropped: readonly string[];
    broughtBack: readonly string[];
    pendingAdds: readonly string[];
    oldList: ReturnType<typeof removeListOf>;
  },
  name: string,
  setName: string,
): string[] {
  const { added, dropped, broughtBack, pendingAdds, oldList } = n;
  const warnings: string[] = [];
  if (added.length)
    warnings.push(
      `claimstep will add ${templatesNamed(added)} to StatefulSet ${name}: it re-creates the set with ${added.length === 1 ? "it" : "them"}, then replaces the pods one at a time, lowest ordinal first, each once its new claims exist; see \`claimstep status ${setName}\``,
    );
  if (dropped.length)
    warnings.push(
      `claimstep will remove ${templatesNamed(dropped)} from StatefulSet ${name}: it re-creates the set without ${dropped.length === 1 ? "it" : "them"}, then replaces the pods one at a time; the claims ${dropped.map((n) => `${n}-${setName}-*`).join(", ")} are kept, labelled ${Keys.orphanedFrom}=${setName} (claimstep never deletes a claim); see \`claimstep status ${setName}\``,
    );
  if (broughtBack.length)
    warnings.push(
      `claimstep no longer removes ${templatesNamed(broughtBack)} from StatefulSet ${name}; ${broughtBack.length === 1 ? "its" : "their"} claims are kept and used again`,
    );
  if (pendingAdds.length)
    warnings.push(`claimstep no longer adds ${templatesNamed(pendingAdds)} to StatefulSet ${name}`);
  if (!oldList.ok)
    warnings.push(
      `claimstep replaced ${Keys.removeTemplates} of ${name}, which was not a JSON array of names (${JSON.stringify(oldList.raw.slice(0, 80))})`,
    );
  return warnings;
}

/**
 * The pod template of an update that adds or removes templates may mount the added volume (or stop
 * mounting a removed one): the API server refuses a pod template that mounts a volume the set lacks
 * (422 volumeMounts[0].name: Not found), so it is held back whole for the re-create to apply; an
 * update back to the live names drops a held one. Writes into `into`; the pod template held, if any.
 */
function holdPodTemplate(
  base: StatefulSet,
  update: SetLike,
  name: string,
  namesChanged: boolean,
  into: { annotations: Record<string, string>; removals: string[]; warnings: string[] },
): unknown {
  const { annotations, removals, warnings } = into;
  const requestedTemplate = podTemplateOfSet(update);
  const storedTemplate = podTemplateOfSet(base);
  const carriesHeld = rawAnnotation(update.metadata.annotations, "podTemplate") !== undefined;
  if (!namesChanged) {
    // Back to the live names: nothing is added or removed, so the pod template of this update
    // passes (the live set has every volume it can mount) and a held one is moot.
    if (carriesHeld) {
      removals.push(Keys.podTemplate);
      if (rawAnnotation(update.metadata.annotations, "podTemplateBase") !== undefined)
        removals.push(Keys.podTemplateBase);
      warnings.push(
        `claimstep dropped the pod template it held in ${Keys.podTemplate} for ${name}: no claim template is added or removed any more, and this update's pod template applies as it is`,
      );
    }
  } else if (
    requestedTemplate !== undefined &&
    storedTemplate !== undefined &&
    !sameJson(requestedTemplate, storedTemplate)
  ) {
    annotations[Keys.podTemplate] = JSON.stringify(requestedTemplate);
    annotations[Keys.podTemplateBase] = podTemplateDigest(storedTemplate);
    warnings.push(
      `claimstep holds back this update's pod template change of ${name} (the API server refuses a pod template that mounts a volume the set does not have yet): it is kept in ${Keys.podTemplate} and applied when claimstep re-creates the set; the pods keep the current template until then`,
    );
    return requestedTemplate;
  } else if (carriesHeld)
    warnings.push(
      `the pod template ${Keys.podTemplate} holds for ${name} stays held (this update does not change spec.template); claimstep applies it when it re-creates the set`,
    );
  return undefined;
}
