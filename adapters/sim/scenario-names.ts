// The names of the simulated cluster's scenarios and the set they hold, apart from the catalogue
// itself (scenarios.ts) so that help, flag checks and completion name them without loading the
// simulation.
export const SCENARIO_NAMES = [
  "grow",
  "vac",
  "blocked",
  "blocked-class",
  "infeasible",
  "offline-driver",
  "node-expansion-restart",
  "pods-claims-first",
  "pods-claims-first-2",
  "pdb-blocks",
  "finalize",
  "finalize-crash",
  "flaky-api",
  "quota",
  "recover",
  "autogrow",
  "opted-out",
  "apply",
  "add-template",
  "remove-template",
] as const;

export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** The StatefulSet every scenario holds. */
export const SET = { namespace: "default", name: "web" } as const;

export const DEFAULT_SCENARIO: ScenarioName = "grow";

const isScenarioName = (name: string): name is ScenarioName => (SCENARIO_NAMES as readonly string[]).includes(name);

/** `sim` or `sim:<scenario>` → the scenario's name; throws listing the scenarios for anything else. */
export function scenarioName(cluster: string): ScenarioName {
  const m = /^sim(?::(.+))?$/.exec(cluster);
  const name = m ? (m[1] ?? DEFAULT_SCENARIO) : undefined;
  if (!name || !isScenarioName(name)) {
    throw new Error(
      `unknown --cluster ${JSON.stringify(cluster)}: use sim or sim:<scenario>, with scenario one of ${SCENARIO_NAMES.join(", ")}`,
    );
  }
  return name;
}
