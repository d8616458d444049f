// POST /v1/relay: the relay's event that a set changed (Standard Webhooks, signed: a bearer token
// is refused) steps the set.
import { namespaceGuard, requireSignature } from "../http/authenticate.js";
import { validate } from "../http/validate.js";
import { RelayEvent } from "../relay/event.js";
import type { App, AppContext } from "./context.js";
import { stepResponse } from "./step.js";

export function serveRelay(app: App, { auth, body, json, allowed, step }: AppContext): void {
  app.post(
    "/v1/relay",
    auth,
    requireSignature(
      "relay events must be signed with the webhook secret (Standard Webhooks), not sent with a bearer token",
    ),
    body,
    json,
    validate("json", RelayEvent, "invalid request body"),
    namespaceGuard(allowed, "json", (e: RelayEvent) => e.data.namespace),
    async (c) => {
      const { namespace, name } = c.req.valid("json").data;
      return stepResponse(c, await step({ namespace, name }, false, "relay"));
    },
  );
}
