// What the pages read: the list's sets, each where its step's dry run says it stands, and one set's
// page (its dry run, usage and Events). Read-only: the step's dry run (functions/dry-run.ts) writes
// nothing; core/view/ turns what is read into the pages' views.
import { ApiError } from "../../../adapters/api-error.js";
import { autogrowOf } from "../../../core/policy/index.js";
import type { MetricsReader, StateReader } from "../../../core/ports.js";
import type { SetRef, Snapshot, UsageReading } from "../../../core/types.js";
import { recentEvents, type SetPageView, type SetSummary, setPage } from "../../../core/view/index.js";
import { type DryRun, dryRunOf } from "../../dry-run.js";
import { EVENTS_SHOWN, type EventsMore, setHref } from "../pages.js";
import type { UiContext, UiDeps } from "./context.js";

/** How many sets the list reads at once (each read is a step's: the set, its pods, claims and classes). */
const LIST_READS_AT_ONCE = 4;

/** The step's dry run on one set (the list's row): what the step would read, Prometheus included. */
const dryRun = (deps: UiDeps, ref: SetRef): Promise<DryRun> =>
  dryRunOf({
    reader: deps.reader,
    writers: deps.writers,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    ref,
    now: deps.now(),
  });

/**
 * The opted-in sets a viewer may see (and those deleted mid re-create), each where its step's dry
 * run says it stands, a few read at a time; the namespaces or sets that could not be read.
 */
export async function listed(
  { deps }: UiContext,
  namespaces: readonly string[] | undefined,
): Promise<{ sets: SetSummary[]; errors: string[] }> {
  const refs: SetRef[] = [];
  const errors: string[] = [];
  const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
  for (const ns of namespaces ?? [undefined]) {
    try {
      refs.push(...(await deps.source.listSets(ns)));
    } catch (err) {
      errors.push(`${ns === undefined ? "all namespaces" : `namespace ${ns}`}: ${why(err)}`);
    }
  }
  const sets: SetSummary[] = [];
  for (let i = 0; i < refs.length; i += LIST_READS_AT_ONCE) {
    const batch = refs.slice(i, i + LIST_READS_AT_ONCE);
    const read = await Promise.allSettled(batch.map((ref) => dryRun(deps, ref)));
    read.forEach((r, j) => {
      const ref = batch[j]!;
      if (r.status === "fulfilled") sets.push(r.value.summary);
      // Gone since the listing: no longer a set to show.
      else if (!(r.reason instanceof ApiError && r.reason.kind === "NotFound"))
        errors.push(`${ref.namespace}/${ref.name}: ${why(r.reason)}`);
    });
  }
  sets.sort((a, b) => a.ref.namespace.localeCompare(b.ref.namespace) || a.ref.name.localeCompare(b.ref.name));
  return { sets, errors };
}

/**
 * An autogrow set's usage, for its bars: the one query a step makes (MetricsReader.usage for all
 * the set's claims at once, never one per claim); none without a policy or a Prometheus.
 */
async function usageOf(deps: UiDeps, ref: SetRef, snapshot: Snapshot): Promise<UsageReading | undefined> {
  const policy = autogrowOf(snapshot.statefulSet);
  if (!deps.metrics || !policy.ok || !policy.policy || snapshot.setMissing) return undefined;
  return deps.metrics.usage(
    ref,
    snapshot.claims.map((c) => c.metadata.name),
  );
}

/**
 * The set page's dry run, with the usage its bars show read once: the step plans with that same
 * reading where autogrow may act (no second query).
 */
async function pageRun(deps: UiDeps, ref: SetRef): Promise<{ dry: DryRun; usage: UsageReading | undefined }> {
  let usage: UsageReading | undefined;
  const reader: StateReader = {
    load: async (r, o) => {
      const snapshot = await deps.reader.load(r, o);
      usage = await usageOf(deps, r, snapshot);
      return snapshot;
    },
  };
  const metrics = deps.metrics;
  const once: MetricsReader | undefined = metrics && {
    usage: async (r, claims, signal) => usage ?? metrics.usage(r, claims, signal),
  };
  const dry = await dryRunOf({
    reader,
    writers: deps.writers,
    ...(once ? { metrics: once } : {}),
    ref,
    now: deps.now(),
  });
  return { dry, usage };
}

/**
 * The set page's view, with its newest EVENTS_SHOWN Events, or all those read (`?events=all`,
 * `all`), and how many there are (the page links to the others).
 */
export async function setView(
  { deps, at }: UiContext,
  ref: SetRef,
  all: boolean,
): Promise<{ view: SetPageView; events: EventsMore }> {
  const [{ dry, usage }, events] = await Promise.all([pageRun(deps, ref), deps.source.events(ref)]);
  const page = setPage(dry.snapshot, dry.planned, dry.summary, events, usage);
  const read = "error" in events ? [] : events;
  return {
    view: { ...page, events: recentEvents(read, all ? read.length : EVENTS_SHOWN) },
    events: { all, total: read.length, href: setHref(at, ref.namespace, ref.name) },
  };
}
