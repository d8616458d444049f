// The door of core/kube/: The Kubernetes objects and values claimstep reads and writes: schemas, quantities, the StatefulSet's own rules, the revision hash, field ownership, the Lease.
// adapters/ and functions/ import core/kube/ through this file only (.dependency-cruiser.cjs).
export * from "./apply-body.js";
export * from "./json.js";
export * from "./k8s.js";
export * from "./lease.js";
export * from "./mounts.js";
export * from "./ownership.js";
export * from "./pod-defaults.js";
export * from "./quantity.js";
export * from "./revision.js";
export * from "./server-fields.js";
export * from "./statefulset.js";
