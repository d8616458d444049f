// Replay protection of forge deliveries: each stepping delivery is claimed in the replay store,
// by its delivery id and by its body, for FORGE_REPLAY_WINDOW_MS.
import { type AnyReplayGuard, replayVerdict } from "../../auth.js";
import { Problem } from "../../http/problem.js";
import type { Provider, WebhookContext } from "./context.js";

/**
 * How long a forge delivery is remembered. GitHub and GitLab sign no timestamp, so there is no
 * tolerance window to match: an hour covers their own retries and redeliveries.
 */
export const FORGE_REPLAY_WINDOW_MS = 60 * 60 * 1000;

/**
 * Record a stepping delivery (by its id and by its body, so that neither a verbatim replay nor one
 * with a new id header gets through) and return what to release if the step fails.
 */
export async function claimDelivery(
  { replay, log }: WebhookContext,
  provider: Provider,
  keys: string[],
): Promise<() => Promise<void>> {
  const now = Date.now();
  const claimed: string[] = [];
  const releaseAll = async () => void (await Promise.all(claimed.map((k) => replay.release(k))));
  for (const key of keys) {
    // A store that fails (an unreachable ledger) must not keep the keys claimed before it:
    // the forge's redelivery would be refused as a replay for the whole window.
    let r: Awaited<ReturnType<AnyReplayGuard["claim"]>>;
    try {
      r = await replay.claim(key, now, now + FORGE_REPLAY_WINDOW_MS);
    } catch (err) {
      await releaseAll();
      throw err;
    }
    // Read strictly, as every signed route reads its store (functions/auth.ts): only { ok: true } accepts.
    const verdict = replayVerdict(key, r);
    if (verdict.ok) {
      claimed.push(key);
      continue;
    }
    await releaseAll();
    if (verdict.failure === "ReplayStoreFull" || verdict.failure === "ReplayStoreUnavailable") {
      const message =
        verdict.failure === "ReplayStoreFull"
          ? "too many webhook deliveries within the replay window: retry later"
          : verdict.message;
      throw new Problem(503, "Unavailable", message, {
        headers: { "Retry-After": String(verdict.retryAfterSeconds) },
      });
    }
    log({ msg: "webhook replayed", provider });
    throw new Problem(401, "Unauthorized", `${provider} webhook: this delivery was already received`, {
      extra: { failure: "Replayed" },
    });
  }
  return releaseAll;
}
