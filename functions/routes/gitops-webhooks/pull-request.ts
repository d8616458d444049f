// One authentic delivery, after its headers and body passed: a pull-request event of a claimstep
// branch steps the set it names (else 202, ignored); its namespace must be allowed (else 403), and
// the delivery must be new (else 401 Replayed, or 503 when the replay store is full).
import { ApiError, PermissionError } from "../../../adapters/api-error.js";
import type { Parsed, PullRequestEvent } from "../../../adapters/gitops/webhook.js";
import { Problem } from "../../http/problem.js";
import type { StepResult } from "../../step.js";
import type { Provider, WebhookContext } from "./context.js";
import { claimDelivery } from "./replay.js";

/** The body as JSON, else 400. */
function jsonOf(provider: Provider, raw: ArrayBuffer): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(raw));
  } catch {
    throw new Problem(
      400,
      "BadRequest",
      `${provider} webhook: the body is not JSON (set the webhook content type to application/json)`,
    );
  }
}

/**
 * What a failed step is answered: a set that no longer exists is 202 (ignored), not an error: GitLab
 * disables a webhook that keeps failing, and a pull request of a deleted set is nothing to retry.
 * Any other failure did nothing: the delivery is released, so that the forge's redelivery is accepted.
 */
async function failedStep(
  { log }: WebhookContext,
  provider: Provider,
  event: PullRequestEvent,
  release: () => Promise<void>,
  err: unknown,
) {
  const ref = event.step.ref;
  if (err instanceof ApiError && err.kind === "NotFound") {
    log({ msg: "webhook for a missing set", provider, namespace: ref.namespace, name: ref.name });
    return {
      status: 202 as const,
      body: { ignored: `StatefulSet ${ref.namespace}/${ref.name} does not exist (branch ${event.branch})` },
    };
  }
  await release(); // nothing was done: a redelivery must be accepted
  if (err instanceof ApiError || err instanceof PermissionError) throw err; // 503, 502, 409 as the app answers them
  throw new Problem(500, "InternalError", `step of ${ref.namespace}/${ref.name} failed: ${(err as Error).message}`, {
    cause: err,
  });
}

/** 403 for a branch naming a namespace outside the allowed ones (empty or absent: all are). */
function refuseNamespace({ opts: { namespaces } }: WebhookContext, event: PullRequestEvent): void {
  const ref = event.step.ref;
  if (namespaces?.length && !namespaces.includes(ref.namespace)) {
    throw new Problem(
      403,
      "Forbidden",
      `branch ${event.branch} names namespace ${ref.namespace}, which claimstep may not act in`,
    );
  }
}

/** What a step answers: the pull request, the set, and where the step left it. */
const steppedBody = (provider: Provider, event: PullRequestEvent, result: StepResult) => ({
  provider,
  pullRequest: { number: event.number, url: event.url, outcome: event.outcome, branch: event.branch },
  set: event.step.ref,
  phase: result.decision.phase,
  reason: result.decision.reason,
  message: result.decision.message,
  outcome: result.outcome.kind,
});

/**
 * The answer to an authentic delivery (its status and JSON body): the event's step, or 202 when the
 * delivery is not a claimstep pull request or its set no longer exists.
 */
export async function stepPullRequest(
  ctx: WebhookContext,
  provider: Provider,
  raw: ArrayBuffer,
  parse: (body: unknown) => Parsed,
  deliveryId: string | undefined,
  bodyKey: string,
) {
  const parsed = parse(jsonOf(provider, raw));
  if ("ignored" in parsed) return { status: 202 as const, body: { ignored: parsed.ignored } };
  const { event } = parsed;
  const ref = event.step.ref;
  refuseNamespace(ctx, event);
  if (!deliveryId) {
    throw new Problem(
      400,
      "BadRequest",
      `${provider} webhook: the delivery has no ${provider === "github" ? "X-GitHub-Delivery" : "Idempotency-Key or X-Gitlab-Event-UUID"} header`,
    );
  }
  const release = await claimDelivery(ctx, provider, [
    `${provider}:delivery:${deliveryId}`,
    `${provider}:body:${bodyKey}`,
  ]);
  let result: StepResult;
  try {
    result = await ctx.opts.step(ref, event);
  } catch (err) {
    return failedStep(ctx, provider, event, release, err);
  }
  return { status: 200 as const, body: steppedBody(provider, event, result) };
}
