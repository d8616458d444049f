// Node only: one WATCH stream of the kubeconfig's cluster over node:http/https with its agent (the
// CA, client certificate and proxy). client-node's Watch drops the body of a refusal, so a 403
// read "Forbidden" and never said which verb on which resource for whom: here a refusal's Status
// becomes an ApiError, as every other request's does.
import type { Agent } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { apiErrorFrom } from "../api-error.js";

/** One line of a watch stream. */
export interface WatchLine {
  type: string;
  object: unknown;
}

/**
 * WATCH `path` (`watch=true` and `query` added): `onLine` for each line, then `done` once, with the
 * error if any (an ApiError for a refusal: its code, reason and the server's message). `abort()`
 * ends the stream; `done` is then called without an error.
 */
export async function watchStream(
  kc: KubeConfig,
  path: string,
  query: Record<string, string>,
  onLine: (line: WatchLine) => void,
  done: (err?: unknown) => void,
): Promise<{ abort(): void }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig: no current cluster");
  const url = new URL(`${cluster.server.replace(/\/+$/, "")}${path}`);
  url.searchParams.set("watch", "true");
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const init = (await kc.applyToFetchOptions({})) as RequestInit & { agent?: Agent };
  const headers = { ...Object.fromEntries(new Headers(init.headers).entries()), accept: "application/json" };
  const controller = new AbortController();
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    controller.abort();
    done(err);
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const req = send(
    url,
    { method: "GET", headers, signal: controller.signal, ...(init.agent ? { agent: init.agent } : {}) },
    (res) => {
      const status = res.statusCode ?? 0;
      res.setEncoding("utf8");
      let text = "";
      if (status !== 200) {
        res.on("data", (chunk: string) => {
          if (text.length < 64 * 1024) text += chunk;
        });
        res.on("end", () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not a Status: the text (or "HTTP <code>") is the message
          }
          finish(apiErrorFrom(status, body, { request: `watch ${path}` }));
        });
        res.on("error", finish);
        return;
      }
      res.on("data", (chunk: string) => {
        text += chunk;
        for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n")) {
          const line = text.slice(0, nl).trim();
          text = text.slice(nl + 1);
          if (!line) continue;
          let parsed: WatchLine | undefined;
          try {
            parsed = JSON.parse(line) as WatchLine;
          } catch {
            continue; // a line cut by a proxy: the next resync repairs what it carried
          }
          onLine(parsed);
        }
      });
      res.on("end", () => finish());
      res.on("close", () => finish());
      res.on("error", finish);
    },
  );
  req.on("error", (err) => finish(controller.signal.aborted ? undefined : err));
  req.end();
  return { abort: () => finish() };
}
