// The status page's HTML, server-rendered with hono/jsx: every value from the cluster is a JSX
// child or attribute, so hono escapes it (a StorageClass name, an API server's message or an
// annotation holding markup shows as text). The only raw HTML is our own CSS.
import type { Child } from "hono/jsx";
import type { OrdinalRow, SetPageView, SetSummary } from "../../core/view/index.js";
import { CSS } from "./assets.js";
import { TimelineChart, UsageChart } from "./charts.js";
import { type Column, cellsOf, Head, Scroll, Table } from "./table.js";
import { Time } from "./time.js";

export const SCRIPT_PATH = "/ui/app.js";

/**
 * Where a page is, with several clusters (functions/fleet/): its cluster, the base of its links
 * (/ui for the default cluster, /ui/clusters/<name> for another), every configured cluster.
 */
export interface At {
  cluster: string;
  base: string;
  clusters: readonly string[];
}

/** Whose clock the pages' times are on, when it is not the cluster's real one. */
export type Clock = "simulated";

/** Says the times are the simulated cluster's (serve --cluster sim), whose clock is not this machine's. */
function ClockNote(props: { clock?: Clock | undefined }) {
  if (props.clock !== "simulated") return null;
  return (
    <p class="muted" data-clock>
      Times are UTC on the simulated cluster's clock (serve --cluster sim: it starts at the scenario's date), not this
      machine's.
    </p>
  );
}

export const setHref = (at: At | undefined, ns: string, name: string) =>
  `${at?.base ?? "/ui"}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;

export function Layout(props: {
  title: string;
  signedIn: boolean;
  script?: boolean;
  at?: At | undefined;
  children: Child;
}) {
  const at = props.at;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <link rel="icon" href="data:," />
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
        {props.script ? <script src={SCRIPT_PATH} defer /> : null}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <span class="brand">claimstep</span>
          <nav aria-label="Status pages">
            <a href={at?.base ?? "/ui"}>All sets</a>
            {at ? <span data-cluster> · cluster {at.cluster}</span> : null}
          </nav>
          {at && props.signedIn && at.clusters.length > 1 ? (
            <nav aria-label="Clusters" data-clusters>
              Clusters:
              {at.clusters.map((n) => (
                <>
                  {" "}
                  <a
                    href={`/ui/clusters/${encodeURIComponent(n)}`}
                    aria-current={n === at.cluster ? "page" : undefined}
                  >
                    {n}
                  </a>
                </>
              ))}
            </nav>
          ) : null}
          {props.signedIn ? (
            <form method="post" action="/ui/logout">
              <button type="submit">Sign out</button>
            </form>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function LoginPage(props: { reason: string; next: string }) {
  return (
    <Layout title="Sign in · claimstep" signedIn={false}>
      <h1>Sign in to the status page</h1>
      <p role="alert" class="error" data-login-reason>
        {props.reason}
      </p>
      <form class="login" method="post" action="/ui/login">
        <label for="token">Viewer token (CLAIMSTEP_VIEWER_TOKEN; read-only, never the step token)</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required />
        <input type="hidden" name="next" value={props.next} />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">The token is kept in an HttpOnly, Secure, SameSite=Strict cookie of this site only.</p>
    </Layout>
  );
}

export function MessagePage(props: {
  title: string;
  heading: string;
  message: string;
  signedIn: boolean;
  at?: At | undefined;
}) {
  return (
    <Layout title={`${props.title} · claimstep`} signedIn={props.signedIn} at={props.at}>
      <h1>{props.heading}</h1>
      <p class="error" data-error>
        {props.message}
      </p>
      <p>
        <a href={props.at?.base ?? "/ui"}>Back to all sets</a>
      </p>
    </Layout>
  );
}

const Phase = (props: { phase: string }) => <span class={`phase p-${props.phase}`}>{props.phase}</span>;

function Progress(props: { s: SetSummary }) {
  const p = props.s.progress;
  if (!p) return <span class="muted">-</span>;
  return (
    <span>
      <progress
        value={p.done}
        max={Math.max(p.total, 1)}
        aria-label={`${props.s.ref.namespace}/${props.s.ref.name}: ${p.done} of ${p.total} ordinals done`}
      >
        {p.done}/{p.total}
      </progress>{" "}
      <span data-field="updated">{props.s.updated}</span>
    </span>
  );
}

function ApplyMode(props: { s: SetSummary }) {
  const m = props.s.applyMode;
  if (m.mode === "invalid") return <span class="error">invalid: {m.value}</span>;
  if (m.mode === "direct") return <span>direct</span>;
  return (
    <span>
      pull request
      {m.link ? (
        <>
          {" "}
          <a href={m.link} rel="noopener noreferrer">
            {m.link}
          </a>
        </>
      ) : null}
    </span>
  );
}

/** Where the list page polls its live part: `${base}/sets`. */
export const listFragmentHref = (at: At | undefined) => `${at?.base ?? "/ui"}/sets`;

export function ListPage(props: {
  sets: SetSummary[];
  errors: string[];
  scope: string;
  at?: At | undefined;
  every?: number;
  clock?: Clock | undefined;
}) {
  return (
    <Layout title="StatefulSets · claimstep" signedIn={true} script={true} at={props.at}>
      <h1>Opted-in StatefulSets</h1>
      <p class="muted">{props.scope}</p>
      <ClockNote clock={props.clock} />
      <p class="live-status muted" id="live-status" role="status" aria-live="polite">
        Follows the sets live.
      </p>
      <section
        id="live"
        aria-label="Opted-in StatefulSets"
        data-poll={listFragmentHref(props.at)}
        data-every={String(props.every ?? 2)}
      >
        <ListFragment sets={props.sets} errors={props.errors} at={props.at} />
      </section>
    </Layout>
  );
}

/** The list page's live part (polled by the script). */
/** The list's columns, one set a row. */
const setColumns = (at: At | undefined): Column<SetSummary>[] => [
  { label: "Namespace", class: "half", cell: (s) => s.ref.namespace },
  {
    label: "Name",
    class: "half",
    cell: (s) => (
      <>
        <a href={setHref(at, s.ref.namespace, s.ref.name)}>{s.ref.name}</a>
        {s.setMissing ? (
          <>
            {" "}
            <span class="error" data-field="missing">
              {s.message}
            </span>
          </>
        ) : null}
        {s.warnings?.length ? (
          <>
            {" "}
            <span class="warn" data-field="warning" title={s.warnings.join("\n")}>
              ⚠ {s.warnings.length === 1 ? "1 warning" : `${s.warnings.length} warnings`}
            </span>
          </>
        ) : null}
      </>
    ),
  },
  { label: "Phase", field: "phase", class: "half", cell: (s) => <Phase phase={s.phase} /> },
  { label: "Reason", field: "reason", class: "half", cell: (s) => s.reason },
  { label: "Since", field: "since", class: "num half", cell: (s) => <Time value={s.since} /> },
  { label: "Revision", field: "revision", class: "half", cell: (s) => <code>{s.revision}</code> },
  { label: "Progress", class: "wide", cell: (s) => <Progress s={s} /> },
  { label: "Apply", field: "apply", class: "wide", cell: (s) => <ApplyMode s={s} /> },
];

export function ListFragment(props: { sets: SetSummary[]; errors: string[]; at?: At | undefined }) {
  const byPhase = new Map<string, number>();
  for (const s of props.sets) byPhase.set(s.phase, (byPhase.get(s.phase) ?? 0) + 1);
  const headline = `${props.sets.length} set${props.sets.length === 1 ? "" : "s"}${[...byPhase].map(([p, n]) => `, ${n} ${p}`).join("")}`;
  return (
    <div data-headline={headline}>
      {props.errors.map((e) => (
        <p class="error" role="alert">
          {e}
        </p>
      ))}
      {props.sets.length === 0 ? (
        <p data-empty>
          No opted-in StatefulSets here (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use
          claimstep set).
        </p>
      ) : (
        <Table
          label="Opted-in StatefulSets"
          attrs={{ "data-sets": true }}
          caption={<caption class="skip">Opted-in StatefulSets, by namespace</caption>}
          columns={setColumns(props.at)}
          rows={props.sets}
          row={(s) => ({ "data-set": `${s.ref.namespace}/${s.ref.name}` })}
        />
      )}
    </div>
  );
}

/** An ordinal's columns of each of its claims (after the ordinal's own: ordinal, pod, state). */
const CLAIM_COLUMNS: Column<OrdinalRow["claims"][number]>[] = [
  { label: "Claim", class: "nw wide", cell: (c) => <code>{c.claim}</code> },
  { label: "Spec", field: "spec", class: "num", cell: (c) => c.spec },
  { label: "Capacity", field: "capacity", class: "num", cell: (c) => c.capacity },
  { label: "Target", field: "target", class: "num", cell: (c) => c.target },
  { label: "VAC", field: "vac", class: "half", cell: (c) => c.vac },
  { label: "Revision", field: "revision", class: "nw half", cell: (c) => <code>{c.revision}</code> },
  {
    label: "Readiness",
    field: "readiness",
    attrs: (c) => ({ class: `wide s-${c.readiness}` }),
    cell: (c) => c.readinessText,
  },
];

function OrdinalBody(props: { o: OrdinalRow; pods: boolean }) {
  const { o, pods } = props;
  const span = Math.max(1, o.claims.length);
  const lead = [
    <th scope="rowgroup" rowspan={span} class="num" data-label="Ordinal">
      {o.ordinal}
    </th>,
    <td rowspan={span} data-field="pod" data-label="Pod">
      {o.pod}
    </td>,
    ...(pods
      ? [
          <td rowspan={span} data-field="pod-ready" data-label="Pod ready" class={`half s-${o.ready}`}>
            {o.ready}
          </td>,
          <td rowspan={span} data-field="pod-revision" data-label="Pod revision" class="half">
            <code>{o.revision}</code>
          </td>,
        ]
      : []),
    <td rowspan={span} data-field="state" data-label="State" class={`s-${o.state}`}>
      {o.state}
    </td>,
  ];
  if (o.claims.length === 0) {
    return (
      <tbody class="ord" data-ordinal={String(o.ordinal)}>
        <tr>
          {lead}
          <td colspan={7} class="muted wide">
            no claims
          </td>
        </tr>
      </tbody>
    );
  }
  return (
    <tbody class="ord" data-ordinal={String(o.ordinal)}>
      {o.claims.map((c, i) => (
        <tr data-claim={c.claim}>
          {i === 0 ? lead : null}
          {cellsOf(CLAIM_COLUMNS, c)}
        </tr>
      ))}
    </tbody>
  );
}

/** The orphans' table: one kept claim a row. */
const ORPHAN_COLUMNS: Column<NonNullable<SetPageView["orphans"]>["claims"][number]>[] = [
  { label: "Claim", class: "half", cell: (c) => <code>{c.claim}</code> },
  { label: "Template", cell: (c) => c.template },
  { label: "Mounted", class: "wide", cell: (c) => c.note },
];

/** The claims of removed templates, kept: which pod still mounts each, the command that deletes the others (docs/templates.md). */
function Orphans(props: { orphans: NonNullable<SetPageView["orphans"]> }) {
  const o = props.orphans;
  return (
    <>
      <h2 id="orphans">{o.heading}</h2>
      <Table
        label="Claims of removed templates"
        attrs={{ "data-orphans": true }}
        columns={ORPHAN_COLUMNS}
        rows={o.claims}
      />
      {o.command ? (
        <>
          <p class="note">Delete the ones no pod mounts once their data is no longer needed (claimstep never does):</p>
          <Command>
            <pre data-orphans-command>
              <code>{o.command}</code>
            </pre>
          </Command>
        </>
      ) : (
        <p class="muted">Each is still mounted: once its pod restarts, this page shows the command to delete it.</p>
      )}
    </>
  );
}

/** How many of the set's Events the page shows unless asked for all of them (`?events=all`). */
export const EVENTS_SHOWN = 10;

/** Which of the set's Events the page shows: the newest EVENTS_SHOWN, or all (`?events=all`), of `total` read. */
export interface EventsMore {
  all: boolean;
  total: number;
  /** The set page's path (its base): the links add `?events=all` or drop it. */
  href: string;
}

/** Says how many of the Events are shown, with the link to the others (or back to the newest). */
function EventsShown(props: { shown: number; more?: EventsMore | undefined }) {
  const m = props.more;
  if (!m || (!m.all && m.total <= props.shown)) return null;
  if (m.all)
    return (
      <p class="muted" data-events-shown>
        All {m.total} events read (the API server keeps them for an hour).{" "}
        <a href={`${m.href}#events`}>Show the {EVENTS_SHOWN} newest only</a>
      </p>
    );
  return (
    <p class="muted" data-events-shown>
      The {props.shown} newest of {m.total} events. <a href={`${m.href}?events=all#events`}>Show all {m.total}</a>
    </p>
  );
}

/**
 * A command to run by hand: wraps on a narrow screen; selected whole by one tap (`user-select:
 * all`), and copied by its button (the page's script shows it: no inline script under the CSP).
 */
function Command(props: { children: Child }) {
  return (
    <div class="cmd">
      {props.children}
      <button type="button" class="copy" data-copy hidden>
        Copy
      </button>
    </div>
  );
}

/** The events table's columns, newest event first. */
const EVENT_COLUMNS: Column<SetPageView["events"][number]>[] = [
  {
    label: "Time",
    class: "num wide",
    cell: (e) => (
      <>
        {e.count > 1 ? <span class="muted">last at </span> : null}
        <Time value={e.time} />
      </>
    ),
  },
  {
    label: "Type",
    attrs: (e) => ({ class: e.type === "Warning" ? "wide s-Blocked" : "wide", "data-type": e.type }),
    cell: (e) => e.type,
  },
  {
    label: "Reason",
    class: "wide",
    cell: (e) => (
      <>
        {e.reason}
        {e.count > 1 ? (
          <>
            {" "}
            <span class="times" data-field="count" title={`recorded ${e.count} times`}>
              ×{e.count}
            </span>
          </>
        ) : null}
      </>
    ),
  },
  { label: "Note", class: "note wide", cell: (e) => e.note },
];

type TemplateField = SetPageView["templates"]["templates"][number]["fields"][number];
/** A template's table: one field a row, live beside desired. */
const TEMPLATE_COLUMNS: Column<TemplateField>[] = [
  { label: "Field", rowHeader: true, class: "wide", cell: (f) => f.field },
  { label: "Live", class: "half", cell: (f) => f.live },
  {
    label: "Desired",
    class: "half",
    cell: (f) => (
      <>
        {f.desired}
        {f.changed ? <span class="muted"> (changed)</span> : null}
      </>
    ),
  },
];

/** The part of the set's page that follows the rollout (swapped in place by the script). */
export function LiveFragment(props: { view: SetPageView; events?: EventsMore | undefined }) {
  const { summary: s, headline: h, next, ordinals, pods, templates, events } = props.view;
  return (
    <div data-headline={`${h.phase} ${h.reason}${h.updated ? ` ${h.updated}` : ""}`}>
      <h2 id="status">Status</h2>
      <dl class="facts" data-headline-fields>
        <dt>Phase</dt>
        <dd data-field="phase">
          <Phase phase={h.phase} />
        </dd>
        <dt>Reason</dt>
        <dd data-field="reason">{h.reason}</dd>
        <dt>Message</dt>
        <dd data-field="message" class="note">
          {h.message}
        </dd>
        <dt>Progress</dt>
        <dd>
          <Progress s={s} />
        </dd>
        <dt>Since</dt>
        <dd data-field="since">
          <Time value={s.since} />
        </dd>
        <dt>Observed</dt>
        <dd data-field="observed">
          <Time value={s.observedAt} />
        </dd>
        <dt>Revision</dt>
        <dd data-field="revision">
          <code>{s.revision}</code> <span class="muted">(current: </span>
          <code data-field="current-revision">{s.currentRevision}</code>
          <span class="muted">)</span>
        </dd>
        <dt>Apply</dt>
        <dd data-field="apply">
          <ApplyMode s={s} />
        </dd>
      </dl>
      {(s.warnings ?? []).map((w) => (
        <p class="note warning" role="note" data-warning>
          {w}
        </p>
      ))}
      {props.view.finalizeHint ? (
        <p class="note hint" data-finalize-hint>
          {props.view.finalizeHint}
        </p>
      ) : null}

      {props.view.timeline.ordinals.length ? (
        <>
          <h2 id="timeline">Rollout timeline</h2>
          <TimelineChart timeline={props.view.timeline} />
        </>
      ) : null}
      {props.view.usage ? (
        <>
          <h2 id="usage">Volume usage (autogrow)</h2>
          <UsageChart usage={props.view.usage} />
        </>
      ) : null}

      <h2 id="ordinals">Ordinals</h2>
      {ordinals.length === 0 ? (
        <p class="muted">No ordinals.</p>
      ) : (
        <Scroll label="Ordinals">
          <table data-ordinals class="stack">
            <caption class="skip">Per-ordinal table: claims{pods ? " and pods" : ""}, highest ordinal first</caption>
            <Head
              labels={[
                "Ordinal",
                "Pod",
                ...(pods ? ["Pod ready", "Pod revision"] : []),
                "State",
                ...CLAIM_COLUMNS.map((c) => c.label),
              ]}
            />
            {ordinals.map((o) => (
              <OrdinalBody o={o} pods={pods} />
            ))}
          </table>
        </Scroll>
      )}

      <h2 id="next">
        {next.action.startsWith("nothing until")
          ? "Next step (waiting on a person)"
          : "Next step (planned, not written)"}
      </h2>
      <dl class="facts" data-next>
        <dt>Decision</dt>
        <dd>
          <Phase phase={next.phase} /> <span data-field="next-reason">{next.reason}</span>
        </dd>
        <dt>Message</dt>
        <dd data-field="next-message" class="note">
          {next.message}
        </dd>
        <dt>Action</dt>
        <dd data-field="next-action">
          <code>{next.action}</code>
        </dd>
      </dl>

      <h2 id="events">Recent events</h2>
      {props.view.eventsError ? (
        <p class="error" data-events-error>
          {props.view.eventsError}
        </p>
      ) : events.length === 0 ? (
        <p class="muted">No events of claimstep on this set.</p>
      ) : (
        <>
          <EventsShown shown={events.length} more={props.events} />
          <Table
            label="Recent events"
            attrs={{ "data-events": true }}
            caption={<caption class="skip">claimstep's events on this set, newest first</caption>}
            columns={EVENT_COLUMNS}
            rows={events}
            row={(e) => ({ "data-count": String(e.count) })}
            classFirst
          />
        </>
      )}

      {props.view.orphans ? <Orphans orphans={props.view.orphans} /> : null}

      <h2 id="templates">Claim templates: desired vs live</h2>
      <p class="muted" data-templates-source>
        Desired templates from{" "}
        {templates.source === "annotation"
          ? "the claimstep.io/volume-claim-templates annotation"
          : templates.source === "spec"
            ? "the live spec (no annotation)"
            : "an invalid annotation"}
        .
      </p>
      {templates.error ? (
        <p class="error" data-templates-error>
          {templates.error}
        </p>
      ) : null}
      {templates.templates.map((t) => (
        <Table
          label={`Template ${t.name}: desired vs live`}
          attrs={{ "data-template": t.name }}
          caption={
            <caption>
              Template <code>{t.name}</code>
              {t.change === "added"
                ? " (added by the next re-create)"
                : t.change === "removed"
                  ? " (removed by the next re-create; its claims are kept)"
                  : null}
            </caption>
          }
          columns={TEMPLATE_COLUMNS}
          rows={t.fields}
          row={(f) => ({ class: f.changed ? "changed" : "" })}
        />
      ))}
    </div>
  );
}

export function SetPage(props: {
  view: SetPageView;
  every: number;
  stream: boolean;
  at?: At | undefined;
  clock?: Clock | undefined;
  events?: EventsMore | undefined;
}) {
  const { ref } = props.view.summary;
  const base = setHref(props.at, ref.namespace, ref.name);
  const query = props.events?.all ? "?events=all" : "";
  return (
    <Layout title={`${ref.namespace}/${ref.name} · claimstep`} signedIn={true} script={true} at={props.at}>
      <h1>
        StatefulSet <span data-field="namespace">{ref.namespace}</span>/<span data-field="name">{ref.name}</span>
      </h1>
      <ClockNote clock={props.clock} />
      <p class="live-status muted" id="live-status" role="status" aria-live="polite">
        Follows the rollout live.
      </p>
      <section
        id="live"
        aria-labelledby="status"
        data-poll={`${base}/fragment${query}`}
        data-stream={props.stream ? `${base}/stream${query}` : undefined}
        data-every={String(props.every)}
      >
        <LiveFragment view={props.view} events={props.events} />
      </section>
    </Layout>
  );
}
