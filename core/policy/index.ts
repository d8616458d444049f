// The door of core/policy/: What a set asks of claimstep: its annotations, parsed once (SetPolicy), and the desired claim templates.
// adapters/ and functions/ import core/policy/ through this file only (.dependency-cruiser.cjs).
export * from "./annotations.js";
export * from "./gitops-owner.js";
export * from "./partition-hold.js";
export * from "./pod-policy.js";
export * from "./policy.js";
export * from "./records.js";
export * from "./shape.js";
export * from "./templates.js";
