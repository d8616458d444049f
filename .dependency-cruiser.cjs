// The architecture as a checked rule (docs/architecture.md, STYLE §3). Layers point left:
//   core/ (pure) <- adapters/ (talk to the world) <- functions/ (entry points) <- test/
// `npm run deps` checks core/, adapters/ and functions/; CI runs it (.ci/run) and fails on any
// violation. Type-only imports count (tsPreCompilationDeps): a cycle through `import type` is a cycle.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle (type-only imports included): move the shared piece into a module both can import.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-only-core-and-zod",
      severity: "error",
      comment:
        "core/ is pure: it imports only core/ and zod (no Node built-ins, no @kubernetes/client-node, " +
        "not even as types, nothing from adapters/ or functions/). Put the I/O in adapters/ behind a port in core/ports.ts.",
      from: { path: "^core/" },
      to: { pathNot: ["^core/", "(^|/)node_modules/zod/"] },
    },
    {
      name: "core-no-node-builtins",
      severity: "error",
      comment: "core/ runs in the Worker and in tests without I/O: no Node built-ins.",
      from: { path: "^core/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "adapters-not-functions",
      severity: "error",
      comment:
        "adapters/ never import the entry points in functions/: take what you need as a parameter " +
        "(e.g. scenarios take a `step` function), or move the pure part to core/.",
      from: { path: "^adapters/" },
      to: { path: "^functions/" },
    },
    {
      name: "product-not-test",
      severity: "error",
      comment: "Product code (core/, adapters/, functions/) never imports test/.",
      from: { path: "^(core|adapters|functions)/" },
      to: { path: "^test/" },
    },
    {
      name: "core-folders-downward",
      severity: "error",
      comment:
        "core/'s folders depend downward only: kube <- policy <- plan <- change <- view. " +
        "Move the shared piece down, into the folder both can import.",
      from: { path: "^core/(kube)/" },
      to: { path: "^core/(policy|plan|change|view)/" },
    },
    {
      name: "core-folders-downward-policy",
      severity: "error",
      comment: "core/policy/ may import core/kube/ and core/'s root only (see core-folders-downward).",
      from: { path: "^core/policy/" },
      to: { path: "^core/(plan|change|view)/" },
    },
    {
      name: "core-folders-downward-plan",
      severity: "error",
      comment: "core/plan/ may import core/kube/, core/policy/ and core/'s root only (see core-folders-downward).",
      from: { path: "^core/plan/" },
      to: { path: "^core/(change|view)/" },
    },
    {
      name: "core-folders-downward-change",
      severity: "error",
      comment: "core/change/ may not import core/view/ (see core-folders-downward).",
      from: { path: "^core/change/" },
      to: { path: "^core/view/" },
    },
    {
      name: "core-folders-through-their-door",
      severity: "error",
      comment:
        'core/ is five folders (kube, policy, plan, change, view; docs/architecture.md "Layout"), each with one door: ' +
        "adapters/ and functions/ import a folder through its index.ts, so what a folder offers the shell is one list. " +
        "Export the new name from the folder's index.ts.",
      from: { path: "^(adapters|functions)/" },
      to: {
        path: "^core/(kube|policy|plan|change|view)/",
        pathNot: "^core/(kube|policy|plan|change|view)/index\\.ts$",
      },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import that resolves to no file: a typo or a missing dependency.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
