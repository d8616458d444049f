// The numbers (CLAIMSTEP_BODY_LIMIT_BYTES, CLAIMSTEP_SUBREQUEST_BUDGET, CLAIMSTEP_SUBREQUESTS_PER_STEP,
// CLAIMSTEP_TICK_SECONDS, CLAIMSTEP_INTERVAL_SECONDS), each already an integer in its range
// (functions/config.ts EnvSchema): what remains is how they bound one another.
import type { Parsed } from "./vars.js";

export interface Limits {
  bodyLimitBytes: number;
  subrequestBudget: number;
  subrequestsPerStep: number;
  tickSeconds: number;
  intervalSeconds: number;
}

export function limitsConfig(env: {
  CLAIMSTEP_BODY_LIMIT_BYTES: number;
  CLAIMSTEP_SUBREQUEST_BUDGET: number;
  CLAIMSTEP_SUBREQUESTS_PER_STEP: number;
  CLAIMSTEP_TICK_SECONDS: number;
  CLAIMSTEP_INTERVAL_SECONDS: number;
}): Parsed<Limits> {
  return {
    config: {
      bodyLimitBytes: env.CLAIMSTEP_BODY_LIMIT_BYTES,
      subrequestBudget: env.CLAIMSTEP_SUBREQUEST_BUDGET,
      subrequestsPerStep: env.CLAIMSTEP_SUBREQUESTS_PER_STEP,
      tickSeconds: env.CLAIMSTEP_TICK_SECONDS,
      intervalSeconds: env.CLAIMSTEP_INTERVAL_SECONDS,
    },
    problems:
      env.CLAIMSTEP_SUBREQUESTS_PER_STEP > env.CLAIMSTEP_SUBREQUEST_BUDGET
        ? ["CLAIMSTEP_SUBREQUEST_BUDGET: must be at least CLAIMSTEP_SUBREQUESTS_PER_STEP"]
        : [],
  };
}
