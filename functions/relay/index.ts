// The watch relay (Node): watches opted-in StatefulSets and their PVCs and pods, debounces bursts
// per set, and POSTs a Standard-Webhooks-signed `statefulset.changed` event to the step handler,
// so steps follow cluster events within seconds. The watch source, the clock and fetch are
// injected: debounce, signatures, retries and reconnects are tested without a cluster.
//
//   clock.ts     the injected clock and backoff
//   watch.ts     a resilient LIST+WATCH of one path
//   debounce.ts  one call per burst of events of a set
//   deliver.ts   the signed, retried POST
//   explain.ts   what a refused watch or a failed delivery means, and what fixes it
//   relay.ts     events of sets, claims and pods → the set they concern
//   event.ts     the event's schema (shared with the app)
//   index.ts     `claimstep relay`, and the public names
import { decodeWebhookSecret, SecretFormatError, webhookSecretList } from "../auth.js";
import { jsonLog } from "../server/log.js";
import { systemClock } from "./clock.js";
import { deliver } from "./deliver.js";
import { Relay } from "./relay.js";

export { type RelayClock, systemClock } from "./clock.js";
export { DEFAULT_DEBOUNCE, type DebounceOptions, Debouncer } from "./debounce.js";
export { DEFAULT_DELIVERY_TIMEOUT_MS, deliver } from "./deliver.js";
export { RelayEvent } from "./event.js";
export { Relay } from "./relay.js";
export { ResilientWatch, type WatchEvent, type WatchSource } from "./watch.js";

export interface RelayFromEnvOptions {
  url: string;
  env: Record<string, string | undefined>;
  namespaces?: string[];
  kubeconfig?: string;
  context?: string;
  log?: (entry: Record<string, unknown>) => void;
}

/** `claimstep relay`: run until SIGTERM/SIGINT, then exit 0. */
export async function relayFromEnv(opts: RelayFromEnvOptions): Promise<number> {
  const log = opts.log ?? jsonLog;
  // Several secrets during a rotation: the app accepts each, the relay signs with the first.
  const secret = webhookSecretList(opts.env.CLAIMSTEP_WEBHOOK_SECRET)[0];
  if (!secret) throw new Error("relay: set CLAIMSTEP_WEBHOOK_SECRET (whsec_<base64>, the same secret as the app's)");
  try {
    decodeWebhookSecret(secret);
  } catch (err) {
    if (err instanceof SecretFormatError) throw new Error(`relay: CLAIMSTEP_WEBHOOK_SECRET: ${err.message}`);
    throw err;
  }
  try {
    new URL(opts.url);
  } catch {
    throw new Error(
      `relay: --url ${JSON.stringify(opts.url)} is not an absolute URL (e.g. https://claimstep.example.com/v1/relay)`,
    );
  }
  const namespaces = opts.namespaces ?? (opts.env.CLAIMSTEP_NAMESPACES ?? "").split(/[\s,]+/).filter(Boolean);
  const { kubeWatchSource } = await import("../kube-target.js");
  const source = kubeWatchSource({
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.context ? { context: opts.context } : {}),
  });
  const clock = systemClock;
  const relay = new Relay({
    source,
    clock,
    namespaces,
    log,
    send: (event) =>
      deliver(event, {
        url: opts.url,
        secret,
        fetch: (u, i) => fetch(u, i),
        clock,
        newId: () => `evt_${crypto.randomUUID()}`,
        log,
      }),
  });
  relay.start();
  log({ msg: "relay started", url: opts.url, namespaces: namespaces.length ? namespaces : "all" });
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolve();
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  await relay.stop();
  log({ msg: "relay stopped" });
  return 0;
}
