// The status page's HTML, server-rendered with hono/jsx: every value from the cluster is a JSX
// child or attribute, so hono escapes it (a StorageClass name, an API server's message or an
// annotation holding markup shows as text). The only raw HTML is our own CSS.
import type { Child } from "hono/jsx";
import type { SetPageView, SetSummary } from "../../core/view/index.js";
import { CSS } from "./assets.js";
import { Events, type EventsMore } from "./live/events.js";
import { NextStep } from "./live/next-step.js";
import { Ordinals } from "./live/ordinals.js";
import { Orphans } from "./live/orphans.js";
import { Pictures } from "./live/pictures.js";
import { Status } from "./live/status.js";
import { Templates } from "./live/templates.js";
import { ApplyMode, Phase, Progress } from "./set-fields.js";
import { type Column, Table } from "./table.js";
import { Time } from "./time.js";

export { EVENTS_SHOWN, type EventsMore } from "./live/events.js";

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

/**
 * A page's live part: the status line the script speaks through (`#live-status`), then the section
 * it keeps current (`#live`) with the attributes that say where and how often (data-poll,
 * data-stream, data-every), in the order given.
 */
function Live({
  follows,
  children,
  ...section
}: {
  follows: string;
  "aria-label"?: string;
  "aria-labelledby"?: string;
  "data-poll": string;
  "data-stream"?: string | undefined;
  "data-every": string;
  children: Child;
}) {
  return (
    <>
      <p class="live-status muted" id="live-status" role="status" aria-live="polite">
        {follows}
      </p>
      <section id="live" {...section}>
        {children}
      </section>
    </>
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
      <Live
        follows="Follows the sets live."
        aria-label="Opted-in StatefulSets"
        data-poll={listFragmentHref(props.at)}
        data-every={String(props.every ?? 2)}
      >
        <ListFragment sets={props.sets} errors={props.errors} at={props.at} />
      </Live>
    </Layout>
  );
}

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

/** The list page's live part (polled by the script). */
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

/** The part of the set's page that follows the rollout (swapped in place by the script): its sections in order. */
export function LiveFragment(props: { view: SetPageView; events?: EventsMore | undefined }) {
  const v = props.view;
  const h = v.headline;
  return (
    <div data-headline={`${h.phase} ${h.reason}${h.updated ? ` ${h.updated}` : ""}`}>
      <Status view={v} />
      <Pictures view={v} />
      <Ordinals ordinals={v.ordinals} pods={v.pods} />
      <NextStep next={v.next} />
      <Events view={v} more={props.events} />
      {v.orphans ? <Orphans orphans={v.orphans} /> : null}
      <Templates templates={v.templates} />
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
      <Live
        follows="Follows the rollout live."
        aria-labelledby="status"
        data-poll={`${base}/fragment${query}`}
        data-stream={props.stream ? `${base}/stream${query}` : undefined}
        data-every={String(props.every)}
      >
        <LiveFragment view={props.view} events={props.events} />
      </Live>
    </Layout>
  );
}
