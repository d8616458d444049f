// Issue 36 point 6: what the API server a set lives on silently leaves out. Pure functions of the
// set as read; the messages are in core/messages.ts.
import type { StatefulSet } from "./k8s.js";
import { Messages } from "./messages.js";
import { maxUnavailableOf } from "./statefulset.js";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** spec.updateStrategy.rollingUpdate.maxUnavailable as the manifest kubectl (or Argo CD) applied asked it. */
function lastAppliedMaxUnavailable(set: StatefulSet): number | string | undefined {
  const raw = set.metadata.annotations?.[LAST_APPLIED];
  if (!raw) return undefined;
  try {
    const applied = JSON.parse(raw) as { spec?: { updateStrategy?: { rollingUpdate?: { maxUnavailable?: unknown } } } };
    const v = applied.spec?.updateStrategy?.rollingUpdate?.maxUnavailable;
    return typeof v === "number" || typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a manager's entry (server-side apply or update) owns the field. */
function ownsMaxUnavailable(set: StatefulSet): string | undefined {
  const entries = (set.metadata as { managedFields?: { manager?: string; fieldsV1?: unknown }[] }).managedFields ?? [];
  for (const e of entries) {
    const f = e.fieldsV1 as Record<string, Record<string, Record<string, Record<string, unknown>>>> | undefined;
    if (f?.["f:spec"]?.["f:updateStrategy"]?.["f:rollingUpdate"]?.["f:maxUnavailable"] !== undefined) return e.manager;
  }
  return undefined;
}

/**
 * `maxUnavailable` asked for (above 1) but absent from the set: the API server drops the field when
 * its MaxUnavailableStatefulSet feature gate is off, and the set then rolls one pod at a time (and
 * claimstep one ordinal at a time). Told from what the set carries: kubectl's (and Argo CD's
 * client-side) last-applied-configuration, or a managedFields entry that owns the field (the field
 * manager records an apply's or update's fields before the strategy drops the disabled ones).
 */
export function droppedMaxUnavailable(set: StatefulSet): string | undefined {
  if (set.spec.updateStrategy?.rollingUpdate?.maxUnavailable !== undefined) return undefined;
  if ((set.spec.updateStrategy?.type ?? "RollingUpdate") !== "RollingUpdate") return undefined;
  const asked = lastAppliedMaxUnavailable(set);
  if (asked !== undefined) {
    const parsed = maxUnavailableOf({
      ...set,
      spec: { ...set.spec, updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: asked } } },
    });
    return parsed.ok && parsed.value > 1 ? Messages.maxUnavailableDropped(String(asked), LAST_APPLIED) : undefined;
  }
  const manager = ownsMaxUnavailable(set);
  return manager !== undefined ? Messages.maxUnavailableDropped(undefined, `managedFields (${manager})`) : undefined;
}
