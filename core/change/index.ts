// The door of core/change/: A change of the desired templates before it is made: the one computation behind `set` (--hold-pods included), the templates route and the webhook, and its outlook.
// adapters/ and functions/ import core/change/ through this file only (.dependency-cruiser.cjs).
export * from "./admission.js";
export * from "./change.js";
export * from "./desired.js";
export * from "./outlook.js";
export * from "./set-size.js";
