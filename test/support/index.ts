// What tests need to stand up an API server: the simulated cluster behind msw or a socket, objects
// shaped like the captured ones, and the captured responses themselves.

export { fixture } from "../fixtures/apiserver.js";
export type { Forge, ForgeKind, ForgeOptions, ForgeRequest, WebhookRoutes } from "./forge.js";
export { forge, githubWebhook, gitlabWebhook, WEBHOOK_SECRET } from "./forge.js";
export { ARGO, gitopsStepper, ROLLOUT_REF, rolloutCluster, rolloutManifest } from "./gitops-rollout.js";
export type { SetScenario, TemplateSpec } from "./objects.js";
export {
  capturedCluster,
  claimTemplate,
  desiredData,
  statefulSetObjects,
  storageClassObjects,
  volumeAttributesClass,
} from "./objects.js";
export type { Counters, KubeObject, PolicyRule, SimServer, SimServerOptions, SocketSim } from "./sim-server.js";
export { capturedSim, claimApplies, createSimServer, serveSim, simClusterOptions } from "./sim-server.js";
export type { RecreateTotals, SoakCase } from "./soak.js";
export { addRecreateCase, inline, recreateTotals, rows, rowsByCount, SOAK_BATCH, soakCases, tally } from "./soak.js";
export { useSimServer } from "./use-sim-server.js";
export type { WranglerDevOptions } from "./wrangler-dev.js";
export { freePort, WRANGLER_START_MS, WranglerDev } from "./wrangler-dev.js";
