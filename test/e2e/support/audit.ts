// The API server's audit log (level Metadata, JSON lines): who did what to which object, and the
// answer's code. The way a real-server scenario proves that no one deleted a claim, that pods were
// deleted only by whom the scenario allows, and that claimstep hit no error it did not expect.
import { readFileSync } from "node:fs";
import { CONTROLLER_MANAGER_USER, NODE_AGENT_USER } from "./control-plane.js";

export interface AuditEntry {
  auditID: string;
  stage: string;
  user: string;
  groups: string[];
  verb: string;
  /** "" for a non-resource request (/version, /readyz). */
  resource: string;
  subresource: string;
  apiGroup: string;
  namespace: string;
  name: string;
  code: number;
  requestURI: string;
  userAgent: string;
  /** stageTimestamp. */
  time: string;
  /** The Status message of an error answer, when the log carries it. */
  message?: string;
}

interface RawEvent {
  auditID: string;
  stage: string;
  requestURI: string;
  verb: string;
  user?: { username?: string; groups?: string[] };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number; message?: string };
  stageTimestamp?: string;
  requestReceivedTimestamp?: string;
}

export type AuditFilter = Partial<
  Pick<AuditEntry, "user" | "verb" | "resource" | "subresource" | "namespace" | "name">
> & {
  /** Only entries at or after this time (ISO string or Date). */
  since?: string | Date;
  /** Any other condition. */
  where?: (e: AuditEntry) => boolean;
};

function toEntry(r: RawEvent): AuditEntry {
  const o = r.objectRef ?? {};
  return {
    auditID: r.auditID,
    stage: r.stage,
    user: r.user?.username ?? "",
    groups: r.user?.groups ?? [],
    verb: r.verb,
    resource: o.resource ?? "",
    subresource: o.subresource ?? "",
    apiGroup: o.apiGroup ?? "",
    namespace: o.namespace ?? "",
    name: o.name ?? "",
    code: r.responseStatus?.code ?? 0,
    requestURI: r.requestURI,
    userAgent: r.userAgent ?? "",
    time: r.stageTimestamp ?? r.requestReceivedTimestamp ?? "",
    ...(r.responseStatus?.message ? { message: r.responseStatus.message } : {}),
  };
}

/** The ResponseComplete entries of the log (a half-written last line is skipped), filtered. */
export function auditEvents(path: string, filter: AuditFilter = {}): AuditEntry[] {
  const text = readFileSync(path, "utf8");
  const since = filter.since === undefined ? undefined : new Date(filter.since).getTime();
  const out: AuditEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    let raw: RawEvent;
    try {
      raw = JSON.parse(line) as RawEvent;
    } catch {
      continue; // the line being written right now
    }
    if (raw.stage !== "ResponseComplete") continue;
    const e = toEntry(raw);
    if (filter.user !== undefined && e.user !== filter.user) continue;
    if (filter.verb !== undefined && e.verb !== filter.verb) continue;
    if (filter.resource !== undefined && e.resource !== filter.resource) continue;
    if (filter.subresource !== undefined && e.subresource !== filter.subresource) continue;
    if (filter.namespace !== undefined && e.namespace !== filter.namespace) continue;
    if (filter.name !== undefined && e.name !== filter.name) continue;
    if (since !== undefined && Date.parse(e.time) < since) continue;
    if (filter.where && !filter.where(e)) continue;
    out.push(e);
  }
  return out;
}

const isDeleteVerb = (v: string) => v === "delete" || v === "deletecollection";

/** Every DELETE (and deletecollection) of a pod or a claim in the namespace, whoever made it
 * (an eviction is `create pods/eviction`: not in here). */
export function deletesOf(events: AuditEntry[], o: { namespace: string }): AuditEntry[] {
  return events.filter(
    (e) =>
      isDeleteVerb(e.verb) &&
      e.namespace === o.namespace &&
      e.subresource === "" &&
      (e.resource === "pods" || e.resource === "persistentvolumeclaims"),
  );
}

/** The node agent finishing a graceful deletion someone else began (the kubelet's delete). */
export const byNodeAgent = (e: AuditEntry) => e.user === NODE_AGENT_USER;
/** The StatefulSet controller (kube-controller-manager's statefulset-controller) deleting a pod:
 * allowed when the scenario changes the pod template. */
export const byStatefulSetController = (e: AuditEntry) =>
  e.user === CONTROLLER_MANAGER_USER && /\/statefulset-controller$/.test(e.userAgent);

export interface AuditCheck {
  /** Claim deletes (always unexpected) and pod deletes the scenario did not allow, that the server
   * carried out (2xx). */
  unexpectedDeletes: AuditEntry[];
  /** claimstep's requests answered 4xx/5xx that the scenario did not expect. */
  unexpectedErrors: AuditEntry[];
  /** Every request claimstep's user made in the namespace (plus cluster-scoped ones with clusterScoped). */
  claimstepRequests: AuditEntry[];
}

export interface AuditCheckOptions {
  events: AuditEntry[];
  namespace: string;
  claimstepUser: string;
  /** Pod deletes the scenario allows (besides the node agent's, always allowed: it only finishes
   * deletions others began, and those beginnings are themselves in the log). */
  allowPodDeletes?: (e: AuditEntry) => boolean;
  /** claimstep's error answers the scenario expects (a 409 race, a 429 budget, a 403 it provokes). */
  expectedErrors?: (e: AuditEntry) => boolean;
  /** Also count claimstep's cluster-scoped requests (classes); they cannot be told apart between
   * test files that run at the same time. */
  clusterScoped?: boolean;
}

/** Every step reads its set's re-create record (issue 33: F4 whatever the set says): none is a 404. */
const recordAbsent = (e: AuditEntry) =>
  e.resource === "configmaps" && e.verb === "get" && e.code === 404 && e.name.startsWith("claimstep-recreate-");

export function checkAudit(o: AuditCheckOptions): AuditCheck {
  const allow = o.allowPodDeletes ?? (() => false);
  const expected = o.expectedErrors ?? (() => false);
  // A delete the server refused deleted nothing (claimstep's own refused attempts are errors below).
  const unexpectedDeletes = deletesOf(o.events, { namespace: o.namespace }).filter(
    (e) => e.code >= 200 && e.code < 300 && (e.resource === "persistentvolumeclaims" || !(byNodeAgent(e) || allow(e))),
  );
  const claimstepRequests = o.events.filter(
    (e) =>
      e.user === o.claimstepUser && (e.namespace === o.namespace || (o.clusterScoped === true && e.namespace === "")),
  );
  const unexpectedErrors = claimstepRequests.filter((e) => e.code >= 400 && !recordAbsent(e) && !expected(e));
  return { unexpectedDeletes, unexpectedErrors, claimstepRequests };
}

/** One line per entry, for assertion messages. */
export function describeAudit(events: AuditEntry[]): string {
  return events
    .map(
      (e) =>
        `${e.time} ${e.user} ${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""} ${e.namespace}/${e.name} → ${e.code}${e.message ? ` (${e.message})` : ""} [${e.userAgent}]`,
    )
    .join("\n");
}

/** The log is written as each answer completes, a moment after the client has it: waits until at
 * least `count` entries match (default 1), and returns them. */
export async function waitForAudit(
  path: string,
  filter: AuditFilter,
  o: { count?: number; timeoutMs?: number } = {},
): Promise<AuditEntry[]> {
  const count = o.count ?? 1;
  const deadline = Date.now() + (o.timeoutMs ?? 10_000);
  for (;;) {
    const found = auditEvents(path, filter);
    if (found.length >= count) return found;
    if (Date.now() > deadline)
      throw new Error(
        `audit log: ${found.length} of ${count} entries matching ${JSON.stringify({ ...filter, where: filter.where ? "(fn)" : undefined })} after ${o.timeoutMs ?? 10_000} ms`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
