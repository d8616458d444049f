// `serve` and `relay`: the long-running Node processes, loaded only when asked for.
import { UsageError, type Context } from "./context.js";

export async function serve(ctx: Context): Promise<number> {
  const { serveFromEnv } = await import("../server.js");
  return serveFromEnv({
    env: ctx.io.env,
    ...(ctx.flags.port ? { port: Number(ctx.flags.port) } : {}),
    ...(ctx.flags.host ? { host: ctx.flags.host } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
    ...(ctx.flags.cluster ? { cluster: ctx.flags.cluster } : {}),
  });
}

export async function relay(ctx: Context): Promise<number> {
  const url = ctx.flags.url ?? ctx.io.env.CLAIMSTEP_RELAY_URL;
  if (!url) throw new UsageError("relay: give --url (the app's /v1/relay endpoint) or set CLAIMSTEP_RELAY_URL");
  if (ctx.flags.cluster) throw new UsageError("relay: watches need a real cluster; --cluster sim is not supported here");
  const { relayFromEnv } = await import("../relay/index.js");
  return relayFromEnv({
    url,
    env: ctx.io.env,
    ...(ctx.flags.namespace ? { namespaces: [ctx.flags.namespace] } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
  });
}
