// claimstep's annotations read from a set, one parser each, for what the policy (core/policy.ts
// policyOf, desiredOf) does not carry: the status record the last step wrote. Issue 38 point 1:
// together with core/policy.ts this is where a claimstep.io/* annotation is read
// (test/core/annotation-readers.test.ts lists the readers not moved here yet).
import type { StatefulSet } from "./k8s.js";
import { Keys } from "./keys.js";
import type { StatusRecord } from "./types.js";

/**
 * `claimstep.io/status` as the last step wrote it: a JSON object, else undefined (absent, empty,
 * not JSON, or JSON but not an object). Its fields are not checked: a record written by an older
 * claimstep or edited by hand may lack some, so read each as possibly absent.
 */
export function recordedStatusOf(set: StatefulSet): StatusRecord | undefined {
  const raw = set.metadata.annotations?.[Keys.status];
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as StatusRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `claimstep.io/current-revision` and `claimstep.io/update-revision` as the last step wrote them (absent: undefined). */
export function recordedRevisionsOf(set: Pick<StatefulSet, "metadata">): { current?: string; update?: string } {
  const a = set.metadata.annotations ?? {};
  return {
    ...(a[Keys.currentRevision] !== undefined ? { current: a[Keys.currentRevision] } : {}),
    ...(a[Keys.updateRevision] !== undefined ? { update: a[Keys.updateRevision] } : {}),
  };
}
