// What the status page reads besides a step's snapshot: the opted-in StatefulSets of a namespace
// (the listing every mode uses, adapters/kube/reader.ts: with the sets deleted mid re-create,
// found by their records) and claimstep's Events on one set (events.k8s.io/v1). Through the production KubeClient, so the same on Workers, Node and the
// simulated cluster; free of Node-only imports.
import { ApiError } from "../../adapters/api-error.js";
import type { KubeClient } from "../../adapters/kube/client.js";
import { REPORTING_CONTROLLER } from "../../adapters/kube/events.js";
import { listOptedInSets } from "../../adapters/kube/reader.js";
import { type Route, Routes } from "../../adapters/kube/routes.js";
import type { SetRef } from "../../core/types.js";
import type { EventRow } from "../../core/view/index.js";

/**
 * The page's one request outside a step's: the Events of a namespace (RBAC: `list` on
 * `events.events.k8s.io`). One page of at most EVENTS_PAGE; the API server keeps Events for an
 * hour by default, so that is claimstep's recent history.
 */
export const listEvents: Route = Routes.listEvents;
export const EVENTS_PAGE = 500;

export interface UiSource {
  /** The opted-in StatefulSets of a namespace (all namespaces: undefined), and those deleted mid re-create. */
  listSets(namespace: string | undefined): Promise<SetRef[]>;
  /** claimstep's Events on the set, or why they could not be read. */
  events(ref: SetRef): Promise<EventRow[] | { error: string }>;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** claimstep's Events on one StatefulSet, from a LIST of the namespace's events.k8s.io/v1 Events. */
export function eventRowsOf(items: readonly unknown[], ref: SetRef): EventRow[] {
  const rows: EventRow[] = [];
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const e = item as Record<string, any>;
    const regarding = (e.regarding ?? {}) as Record<string, unknown>;
    if (regarding.kind !== "StatefulSet" || regarding.name !== ref.name) continue;
    if (e.reportingController !== REPORTING_CONTROLLER) continue;
    const time =
      text(e.series?.lastObservedTime) ??
      text(e.eventTime) ??
      text(e.deprecatedLastTimestamp) ??
      text(e.metadata?.creationTimestamp) ??
      "-";
    const count = Number(e.series?.count ?? e.deprecatedCount ?? 1);
    rows.push({
      time,
      type: text(e.type) ?? "-",
      reason: text(e.reason) ?? "-",
      note: typeof e.note === "string" ? e.note : "",
      count: Number.isFinite(count) ? count : 1,
    });
  }
  return rows;
}

export function uiSource(client: KubeClient): UiSource {
  return {
    listSets: (namespace) => listOptedInSets(client, namespace),
    async events(ref) {
      try {
        const page = (await client.send(
          listEvents,
          { namespace: ref.namespace },
          { query: { limit: String(EVENTS_PAGE) } },
        )) as { items?: unknown[] };
        return eventRowsOf(Array.isArray(page?.items) ? page.items : [], ref);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        const hint = err.code === 403 ? " (grant list on events.events.k8s.io to read them)" : "";
        return { error: `the Events could not be read: ${err.message}${hint}` };
      }
    },
  };
}
