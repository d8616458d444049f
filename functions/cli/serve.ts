// `serve` and `relay`: the long-running Node processes, loaded only when asked for.
import type { Context } from "./context.js";
import { UsageError } from "./flags.js";

/** A TCP port, from --port or $PORT: refused at once rather than left to listen() (which throws later, while the process keeps running). */
export function portOf(flag: string | undefined, env: string | undefined): number | undefined {
  const [raw, source] =
    flag !== undefined ? [flag, "--port"] : env !== undefined && env !== "" ? [env, "$PORT"] : [undefined, ""];
  if (raw === undefined) return undefined;
  const port = /^\d{1,5}$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(
      `serve: ${source} ${JSON.stringify(raw)} is not a port: give a number from 1 to 65535 (0: any free one), e.g. --port 8080`,
    );
  return port;
}

export async function serve(ctx: Context): Promise<number> {
  const port = portOf(ctx.flags.port, ctx.io.env.PORT);
  const { serveFromEnv } = await import("../server.js");
  return serveFromEnv({
    env: ctx.io.env,
    ...(port !== undefined ? { port } : {}),
    ...(ctx.flags.host ? { host: ctx.flags.host } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
    ...(ctx.flags.cluster ? { cluster: ctx.flags.cluster } : {}),
  });
}

export async function relay(ctx: Context): Promise<number> {
  const url = ctx.flags.url ?? ctx.io.env.CLAIMSTEP_RELAY_URL;
  if (!url) throw new UsageError("relay: give --url (the app's /v1/relay endpoint) or set CLAIMSTEP_RELAY_URL");
  if (ctx.flags.cluster)
    throw new UsageError("relay: watches need a real cluster; --cluster sim is not supported here");
  const { relayFromEnv } = await import("../relay/index.js");
  return relayFromEnv({
    url,
    env: ctx.io.env,
    ...(ctx.flags.namespace ? { namespaces: [ctx.flags.namespace] } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
  });
}
