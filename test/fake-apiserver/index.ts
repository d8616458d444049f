// The fake API server's public face: see README.md beside this file.
export { createFakeApiServer, mergePatch } from "./server.js";
export type { Counters, FakeApiServer, FakeApiServerOptions, Failure, KubeObject, Match, PolicyRule, RequestInfo, Verb } from "./server.js";
export { capturedCluster, claimTemplate, statefulSetObjects, storageClassObjects, volumeAttributesClass } from "./objects.js";
export type { SetScenario, TemplateSpec } from "./objects.js";
export { fixture } from "./fixtures.js";
export type { FixtureName } from "./fixtures.js";
