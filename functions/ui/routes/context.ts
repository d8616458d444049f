// What the status page's routes share, built once per app (functions/ui/routes.tsx): the
// dependencies, the settings with their defaults, and the small helpers every route uses.
import type { Context } from "hono";
import type { MetricsReader, StateReader, Writers } from "../../../core/ports.js";
import type { SetRef } from "../../../core/types.js";
import type { Viewer } from "../../config.js";
import { Name, Namespace } from "../../relay/event.js";
import type { At, Clock } from "../pages.js";
import { type Who, whoIs } from "../session.js";
import type { UiSource } from "../source.js";

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

/** UiDeps with the defaults filled in: what every route reads. */
export interface UiContext {
  deps: UiDeps;
  /** Seconds between two renders of the live part. */
  every: number;
  /** Renders one stream sends. */
  renders: number;
  /** Serve the stream. */
  stream: boolean;
  log: (entry: Record<string, unknown>) => void;
  at: At | undefined;
  /** Where this app's list and set pages are: /ui, or /ui/clusters/<name>. */
  base: string;
}

export function uiContext(deps: UiDeps): UiContext {
  return {
    deps,
    every: deps.everySeconds ?? 2,
    renders: deps.streamRenders ?? 8,
    stream: deps.stream ?? true,
    log: deps.log ?? (() => {}),
    at: deps.at,
    base: deps.at?.base ?? "/ui",
  };
}

export const html = async (c: Context, node: unknown, status = 200) =>
  c.html(`<!DOCTYPE html>${await String(node)}`, status as 200);

/** The viewer the request's cookie names, and the namespaces it may see. */
export const whoOf = (ctx: UiContext, c: Context): Promise<Who> => whoIs(c, ctx.deps.viewers, ctx.deps.namespaces);

/** The set a route's `:namespace/:name` names, if both are valid names. */
export const refOf = (c: Context): SetRef | undefined => {
  const namespace = Namespace.safeParse(c.req.param("namespace"));
  const name = Name.safeParse(c.req.param("name"));
  return namespace.success && name.success ? { namespace: namespace.data, name: name.data } : undefined;
};

export const allowed = (namespaces: readonly string[] | undefined, ns: string) =>
  namespaces === undefined || namespaces.includes(ns);

/** `?events=all`: the set page shows every Event read, not only the newest. */
export const allEvents = (c: Context) => c.req.query("events") === "all";
