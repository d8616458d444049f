// The door of core/view/: Where a set stands, as every status surface shows it: the view model, the summary, the timeline, the rendering, the recorder.
// adapters/ and functions/ import core/view/ through this file only (.dependency-cruiser.cjs).
export * from "./orphans.js";
export * from "./recorder.js";
export * from "./render.js";
export * from "./stopped.js";
export * from "./summary.js";
export * from "./timeline.js";
export * from "./usage-view.js";
export * from "./view.js";
