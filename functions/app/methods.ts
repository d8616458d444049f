// A known path with the wrong method is a 405 with Allow, not a 404.

import { methodNotAllowed } from "../http/problem.js";
import { ADMISSION_PATH } from "../routes/admission.js";
import type { App } from "./context.js";

const METHODS: Array<[string, string]> = [
  ["/healthz", "GET, HEAD"],
  ["/v1/statefulsets/:namespace/:name", "GET, HEAD"],
  ["/v1/steps", "POST"],
  ["/v1/statefulsets/:namespace/:name/templates", "POST"],
  ["/v1/relay", "POST"],
  [ADMISSION_PATH, "POST"],
];

export function refuseOtherMethods(app: App): void {
  for (const [path, allow] of METHODS) app.all(path, methodNotAllowed(allow));
}
