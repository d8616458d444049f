// What tests need to stand up an API server: the simulated cluster behind msw or a socket, objects
// shaped like the captured ones, and the captured responses themselves.
export { capturedSim, claimApplies, createSimServer, serveSim, simClusterOptions } from "./sim-server.js";
export { useSimServer } from "./use-sim-server.js";
export type { Counters, KubeObject, PolicyRule, SimServer, SimServerOptions, SocketSim } from "./sim-server.js";
export { capturedCluster, claimTemplate, desiredData, statefulSetObjects, storageClassObjects, volumeAttributesClass } from "./objects.js";
export type { SetScenario, TemplateSpec } from "./objects.js";
export { fixture } from "../fixtures/apiserver.js";
export { WEBHOOK_SECRET, forge, githubWebhook, gitlabWebhook } from "./forge.js";
export type { Forge, ForgeKind, ForgeOptions, ForgeRequest, WebhookRoutes } from "./forge.js";
export { ARGO, ROLLOUT_REF, gitopsStepper, rolloutCluster, rolloutManifest } from "./gitops-rollout.js";
export { WRANGLER_START_MS, WranglerDev, freePort } from "./wrangler-dev.js";
export type { WranglerDevOptions } from "./wrangler-dev.js";
export { SOAK_BATCH, addRecreateCase, inline, recreateTotals, rows, rowsByCount, soakCases, tally } from "./soak.js";
export type { RecreateTotals, SoakCase } from "./soak.js";
