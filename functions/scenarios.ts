// The simulated cluster's scenarios (adapters/sim/scenarios.ts) as the entry points and the tests
// build them: with claimstep's own step (runStep) and admission route, which the scenarios that
// need them run (the sim, an adapter, never imports the entry points).
import { simScenarios } from "../adapters/sim/scenarios.js";
import { admissionRoutes } from "./routes/admission.js";
import { runStep } from "./step.js";

export const SCENARIOS = simScenarios({ step: runStep, admission: admissionRoutes().fetch });
