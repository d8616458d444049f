// The door of core/plan/: planStep and its parts: the single next safe action for one set, and what a writer makes of it.
// adapters/ and functions/ import core/plan/ through this file only (.dependency-cruiser.cjs).
export * from "./autogrow.js";
export * from "./backoff.js";
export * from "./claims.js";
export * from "./cluster-support.js";
export * from "./decision.js";
export * from "./finalize.js";
export * from "./plan.js";
export * from "./pods.js";
export * from "./readiness.js";
export * from "./recreate-record.js";
export * from "./reshape.js";
export * from "./rules.js";
export * from "./scope.js";
export * from "./verdict.js";
export * from "./walk.js";
