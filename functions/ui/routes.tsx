// The status page's routes, mounted into the one Hono app (functions/app.ts), so the Worker and
// the Node server serve it alike:
//   GET  /ui                        the opted-in sets the viewer may see (it polls /ui/sets)
//   GET  /ui/sets                   the list's live part once
//   GET  /ui/:namespace/:name       one set: status, per-ordinal table, next step, events, templates
//   GET  /ui/:namespace/:name/stream    server-sent events: the live part, re-rendered when it changes
//   GET  /ui/:namespace/:name/fragment  the live part once (polling, where a runtime cannot stream)
//   GET  /ui/login, POST /ui/login, POST /ui/logout, GET /ui/app.js
// With several clusters (functions/fleet/entry.ts) each cluster's app serves its list and set
// pages under /ui/clusters/<name> (the default cluster's under /ui), and /ui/clusters/<unknown>
// is a 404 page naming the configured clusters.
// Read-only: it loads and plans (the step's dry run, functions/dry-run.ts: no write) and lists
// Events; nothing else. The list and the set page show where each set stands as `claimstep status`
// does (core/view/summary.ts): one plan per set.
import { type Context, Hono } from "hono";
import { csrf } from "hono/csrf";
import { streamSSE } from "hono/streaming";
import { ApiError } from "../../adapters/api-error.js";
import { autogrowOf } from "../../core/policy/index.js";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
import type { SetRef, Snapshot, UsageReading } from "../../core/types.js";
import type { SetSummary } from "../../core/view/index.js";
import { recentEvents, type SetPageView, setPage } from "../../core/view/index.js";
import { bearerMatches } from "../auth.js";
import type { Viewer } from "../config.js";
import { type DryRun, dryRunOf } from "../dry-run.js";
import { readBody } from "../http/body.js";
import { Name, Namespace } from "../relay/event.js";
import { CSS, cspHash, SCRIPT } from "./assets.js";
import {
  type At,
  type Clock,
  EVENTS_SHOWN,
  type EventsMore,
  ListFragment,
  ListPage,
  LiveFragment,
  LoginPage,
  MessagePage,
  SetPage,
  setHref,
} from "./pages.js";
import { forgetToken, keepToken, viewerOf, whoIs } from "./session.js";
import type { UiSource } from "./source.js";

export interface UiOptions {
  viewers: readonly Viewer[];
  source: UiSource;
  /** Seconds between two renders of the live part (the stream's pace, the polling interval). */
  everySeconds?: number;
  /**
   * Renders one stream sends before it ends (the browser reconnects at once): bounds what one
   * request costs (each render reads the set: a Worker counts its subrequests). Default 8.
   */
  streamRenders?: number;
  /** Serve the stream (false: the page polls the fragment). Default true. */
  stream?: boolean;
  /** Several clusters: the one this app reads, the base of its pages, every configured one. */
  at?: At;
  /** Whose clock the times are on when it is not a real cluster's (serve --cluster sim): the pages say so. */
  clock?: Clock;
}

export interface UiDeps extends UiOptions {
  reader: StateReader;
  writers: Writers;
  now: () => Date;
  /** Namespaces claimstep manages (CLAIMSTEP_NAMESPACES); empty = all. */
  namespaces: readonly string[];
  /** The step API's bearer tokens: refused at the login form. */
  apiTokens: readonly string[];
  log?: (entry: Record<string, unknown>) => void;
  /** Autogrow's metrics reader: the set page's usage bars read through it (absent: they say none is configured). */
  metrics?: MetricsReader;
}

const html = async (c: Context, node: unknown, status = 200) =>
  c.html(`<!DOCTYPE html>${await String(node)}`, status as 200);

/** The largest login or logout form read (a token of up to 512 characters and a path). */
export const FORM_LIMIT_BYTES = 4096;

const NEXT_BASE = "http://claimstep.invalid";

/**
 * Where the login form may send the viewer back to: a path of the page only, normalised (dot
 * segments resolved, `%2e` included, query and fragment dropped), else /ui. Refused: anything not
 * starting with a single "/" (`//host`, `/\host`, a scheme), a backslash or control character
 * anywhere (browsers read `\` as `/`), and any path outside /ui once resolved.
 */
export function safeNext(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > 2048 || !raw.startsWith("/") || raw.startsWith("//")) return "/ui";
  if (/[\\\u0000-\u0020\u007f]/.test(raw)) return "/ui";
  let url: URL;
  try {
    url = new URL(raw, NEXT_BASE);
  } catch {
    return "/ui";
  }
  const path = url.pathname;
  if (url.origin !== NEXT_BASE || path.includes("//")) return "/ui";
  if (path !== "/ui" && !path.startsWith("/ui/")) return "/ui";
  return /^\/ui(\/[A-Za-z0-9._~%-]*)*$/.test(path) ? path : "/ui";
}

/** How many sets the list reads at once (each read is a step's: the set, its pods, claims and classes). */
const LIST_READS_AT_ONCE = 4;

export function uiRoutes(deps: UiDeps): Hono {
  const app = new Hono();
  const every = deps.everySeconds ?? 2;
  const renders = deps.streamRenders ?? 8;
  const stream = deps.stream ?? true;
  const log = deps.log ?? (() => {});
  const at = deps.at;
  const base = at?.base ?? "/ui";
  let styleHash: Promise<string> | undefined;

  // Every answer of the page: its own CSP (our script from /ui/app.js, our CSS by its hash, no
  // inline script or style attribute, no frames), no caching, no sniffing, no referrer.
  app.use("/ui", headers);
  app.use("/ui/*", headers);
  async function headers(c: Context, next: () => Promise<void>) {
    await next();
    styleHash ??= cspHash(CSS);
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; script-src 'self'; style-src ${await styleHash}; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    if (!c.res.headers.get("Cache-Control")) c.header("Cache-Control", "no-store");
  }

  const login = (c: Context, reason: string, status: number, clear = false) => {
    if (clear) forgetToken(c);
    return html(c, <LoginPage reason={reason} next={safeNext(c.req.path)} />, status);
  };

  const refOf = (c: Context): SetRef | undefined => {
    const namespace = Namespace.safeParse(c.req.param("namespace"));
    const name = Name.safeParse(c.req.param("name"));
    return namespace.success && name.success ? { namespace: namespace.data, name: name.data } : undefined;
  };

  const allowed = (namespaces: readonly string[] | undefined, ns: string) =>
    namespaces === undefined || namespaces.includes(ns);

  /** The step's dry run on one set (the list's row): what the step would read, Prometheus included. */
  const dryRun = (ref: SetRef): Promise<DryRun> =>
    dryRunOf({
      reader: deps.reader,
      writers: deps.writers,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ref,
      now: deps.now(),
    });

  /**
   * The set page's dry run, with the usage its bars show read once: the step plans with that same
   * reading where autogrow may act (no second query).
   */
  async function pageRun(ref: SetRef): Promise<{ dry: DryRun; usage: UsageReading | undefined }> {
    let usage: UsageReading | undefined;
    const reader: StateReader = {
      load: async (r, o) => {
        const snapshot = await deps.reader.load(r, o);
        usage = await usageOf(r, snapshot);
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
  async function view(ref: SetRef, all: boolean): Promise<{ view: SetPageView; events: EventsMore }> {
    const [{ dry, usage }, events] = await Promise.all([pageRun(ref), deps.source.events(ref)]);
    const page = setPage(dry.snapshot, dry.planned, dry.summary, events, usage);
    const read = "error" in events ? [] : events;
    return {
      view: { ...page, events: recentEvents(read, all ? read.length : EVENTS_SHOWN) },
      events: { all, total: read.length, href: setHref(at, ref.namespace, ref.name) },
    };
  }

  /** `?events=all`: the set page shows every Event read, not only the newest. */
  const allEvents = (c: Context) => c.req.query("events") === "all";

  /**
   * An autogrow set's usage, for its bars: the one query a step makes (MetricsReader.usage for all
   * the set's claims at once, never one per claim); none without a policy or a Prometheus.
   */
  async function usageOf(ref: SetRef, snapshot: Snapshot): Promise<UsageReading | undefined> {
    const policy = autogrowOf(snapshot.statefulSet);
    if (!deps.metrics || !policy.ok || !policy.policy || snapshot.setMissing) return undefined;
    return deps.metrics.usage(
      ref,
      snapshot.claims.map((c) => c.metadata.name),
    );
  }

  /** A set the viewer may not see, or that does not exist: a page naming it. */
  const problemPage = (c: Context, ref: SetRef | undefined, err: unknown) => {
    const named = ref ? `${ref.namespace}/${ref.name}` : `${c.req.param("namespace")}/${c.req.param("name")}`;
    if (!ref)
      return html(
        c,
        <MessagePage
          title="Not found"
          heading="Not found"
          message={`"${named}" is not a StatefulSet name (namespace/name)`}
          signedIn={true}
          at={at}
        />,
        404,
      );
    if (err instanceof ApiError && err.kind === "NotFound") {
      return html(
        c,
        <MessagePage
          title="Not found"
          heading={`StatefulSet ${named} not found`}
          message={`No StatefulSet ${named}: check the name and the namespace.`}
          signedIn={true}
          at={at}
        />,
        404,
      );
    }
    const message = err instanceof Error ? err.message : String(err);
    log({ msg: "ui read failed", namespace: ref.namespace, name: ref.name, error: message });
    return html(
      c,
      <MessagePage
        title="Unavailable"
        heading={`StatefulSet ${named} could not be read`}
        message={message}
        signedIn={true}
        at={at}
      />,
      502,
    );
  };

  app.get("/ui/app.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    c.header("Cache-Control", "no-cache");
    return c.body(SCRIPT);
  });

  app.get("/ui/login", async (c) => {
    const who = await whoIs(c, deps.viewers, deps.namespaces);
    if (who.ok) return c.redirect("/ui", 303);
    return html(
      c,
      <LoginPage
        reason={who.clear ? who.reason : "Sign in with a viewer token to see the rollouts."}
        next={safeNext(c.req.query("next"))}
      />,
      200,
    );
  });

  // The one body reader (functions/http/body.ts, any framing: 413 beyond the limit), after the
  // same-origin check, which reads only headers.
  const formBody = readBody({ maxBytes: FORM_LIMIT_BYTES });
  const sameOrigin = csrf();

  app.post("/ui/login", sameOrigin, formBody, async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const next = safeNext(form.next);
    const again = (reason: string) => html(c, <LoginPage reason={reason} next={next} />, 401);
    if (!token) return again("Enter a viewer token.");
    if (await bearerMatches(`Bearer ${token}`, deps.apiTokens)) {
      log({ msg: "ui login refused", why: "step token" });
      return again(
        "That is a step (API) token: the status page takes a viewer token of its own (CLAIMSTEP_VIEWER_TOKEN), read-only.",
      );
    }
    if (!/^\S{1,512}$/.test(token) || !(await viewerOf(token, deps.viewers))) {
      log({ msg: "ui login refused", why: "unknown token" });
      return again("The viewer token is not valid.");
    }
    await keepToken(c, token);
    return c.redirect(next, 303);
  });

  app.post("/ui/logout", sameOrigin, formBody, (c) => {
    forgetToken(c);
    return c.redirect("/ui/login", 303);
  });

  if (at && base === "/ui") {
    // A cluster not configured (the default cluster's app gets every /ui/clusters/… of no other).
    app.get("/ui/clusters/:cluster/*", async (c) => {
      const who = await whoIs(c, deps.viewers, deps.namespaces);
      if (!who.ok) return login(c, who.reason, 401, who.clear);
      const named = `cluster ${c.req.param("cluster").slice(0, 63)}`;
      return html(
        c,
        <MessagePage
          title="Not found"
          heading={`No ${named}`}
          message={`The ${named} is not configured here (configured: ${at.clusters.join(", ")}).`}
          signedIn={true}
          at={at}
        />,
        404,
      );
    });
  }

  /**
   * The opted-in sets a viewer may see (and those deleted mid re-create), each where its step's dry
   * run says it stands, a few read at a time; the namespaces or sets that could not be read.
   */
  async function listed(namespaces: readonly string[] | undefined): Promise<{ sets: SetSummary[]; errors: string[] }> {
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
      const read = await Promise.allSettled(batch.map((ref) => dryRun(ref)));
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

  app.get(base, async (c) => {
    const who = await whoIs(c, deps.viewers, deps.namespaces);
    if (!who.ok) return login(c, who.reason, 401, who.clear);
    const namespaces = who.namespaces;
    const { sets, errors } = await listed(namespaces);
    const scope =
      namespaces === undefined
        ? "All namespaces."
        : namespaces.length
          ? `Namespaces: ${namespaces.join(", ")}.`
          : "No namespace: this viewer token sees none that claimstep manages here.";
    return html(c, <ListPage sets={sets} errors={errors} scope={scope} at={at} every={every} clock={deps.clock} />);
  });

  // The list's live part, polled by the list page (401 as plain text: the script reloads the page).
  app.get(`${base}/sets`, async (c) => {
    const who = await whoIs(c, deps.viewers, deps.namespaces);
    if (!who.ok) {
      if (who.clear) forgetToken(c);
      return c.text(who.reason, 401);
    }
    const { sets, errors } = await listed(who.namespaces);
    return c.html(String(await (<ListFragment sets={sets} errors={errors} at={at} />)));
  });

  app.get(`${base}/:namespace/:name`, async (c) => {
    const who = await whoIs(c, deps.viewers, deps.namespaces);
    if (!who.ok) return login(c, who.reason, 401, who.clear);
    const ref = refOf(c);
    if (ref && !allowed(who.namespaces, ref.namespace)) {
      return html(
        c,
        <MessagePage
          title="Not allowed"
          heading={`Namespace ${ref.namespace} is not yours to see`}
          message={`This viewer token does not see namespace ${ref.namespace}.`}
          signedIn={true}
          at={at}
        />,
        403,
      );
    }
    try {
      if (!ref) throw new Error("bad reference");
      const v = await view(ref, allEvents(c));
      return html(
        c,
        <SetPage view={v.view} events={v.events} every={every} stream={stream} at={at} clock={deps.clock} />,
      );
    } catch (err) {
      return problemPage(c, ref, err);
    }
  });

  /** The live part's two ways: 401/403/404 as plain text (the script reloads the page on 401). */
  const live = async (c: Context): Promise<{ ref: SetRef } | Response> => {
    const who = await whoIs(c, deps.viewers, deps.namespaces);
    if (!who.ok) {
      if (who.clear) forgetToken(c);
      return c.text(who.reason, 401);
    }
    const ref = refOf(c);
    if (!ref) return c.text("not a StatefulSet name", 404);
    if (!allowed(who.namespaces, ref.namespace))
      return c.text(`this viewer token does not see namespace ${ref.namespace}`, 403);
    return { ref };
  };

  const fragment = async (ref: SetRef, all: boolean): Promise<string> => {
    try {
      const v = await view(ref, all);
      return String(<LiveFragment view={v.view} events={v.events} />);
    } catch (err) {
      const message =
        err instanceof ApiError && err.kind === "NotFound"
          ? `StatefulSet ${ref.namespace}/${ref.name} not found.`
          : `could not read the set: ${err instanceof Error ? err.message : String(err)}`;
      return String(
        <div data-headline="unavailable">
          <p class="error" role="alert">
            {message}
          </p>
        </div>,
      );
    }
  };

  app.get(`${base}/:namespace/:name/fragment`, async (c) => {
    const ok = await live(c);
    if (ok instanceof Response) return ok;
    return c.html(await fragment(ok.ref, allEvents(c)));
  });

  app.get(`${base}/:namespace/:name/stream`, async (c) => {
    const ok = await live(c);
    if (ok instanceof Response) return ok;
    if (!stream) return c.text("streaming is off here: poll the fragment", 404);
    // no-store, as every page (streamSSE says no-cache: store, revalidate).
    const res = streamSSE(c, async (sse) => {
      let aborted = false;
      sse.onAbort(() => {
        aborted = true;
      });
      let last = "";
      const all = allEvents(c);
      for (let i = 0; i < renders && !aborted; i++) {
        const now = await fragment(ok.ref, all);
        if (now !== last) {
          last = now;
          await sse.writeSSE({ event: "view", data: now, retry: every * 1000 });
        }
        if (i < renders - 1) await sse.sleep(every * 1000);
      }
    });
    res.headers.set("Cache-Control", "no-store");
    return res;
  });

  app.all("/ui/*", (c) =>
    html(
      c,
      <MessagePage title="Not found" heading="Not found" message={`No page at ${c.req.path}.`} signedIn={false} />,
      404,
    ),
  );
  return app;
}
