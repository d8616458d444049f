// The bounds on YAML live in adapters/yaml-bounds.ts, so that the GitOps adapters (files read from
// the repository) use the same ones as the HTTP routes (bodies).
export { YAML_LIMITS, yamlOverLimits } from "../../adapters/yaml-bounds.js";
