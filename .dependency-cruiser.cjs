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
