// The sim's refusals (adapters/sim/errors.ts builds each Status body from names) against the ones
// captured from the real v1.34.2 server (test/fixtures/apiserver/v1.34/, `npm run
// fixtures:capture`): the conformance script run on the sim with the capture's names, and every
// answer the real server refused compared with the sim's, as test/e2e/conformance.test.ts compares
// them live (projection: uids, resourceVersions and times substituted). The live comparison needs
// the e2e tier; this one holds the hand-built texts to the captured ones in the fast tier.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type Exchange,
  newSimCluster,
  projection,
  runConformanceScript,
  type ScriptNames,
  simSide,
} from "../../e2e/support/conformance-script.js";
import { FIXTURES_DIR, fixtureStatus } from "../../fixtures/apiserver.js";

/** The names scripts/capture-fixtures.ts ran the script with. */
const CAPTURED: ScriptNames = {
  namespace: "fx",
  fast: "fast",
  fixed: "fixed",
  silver: "silver",
  gold: "gold",
  lease: "claimstep-conformance",
  leaseNamespace: "claimstep",
};

const captured = (e: Exchange) =>
  existsSync(`${FIXTURES_DIR}v1.34/${e.name}.txt`) ? fixtureStatus(`v1.34/${e.name}.txt`) : undefined;

describe("the sim's refusals are the captured v1.34 ones", () => {
  it("every request the real server refused gets the same status and Status body from the sim", async () => {
    const sim = await runConformanceScript(simSide(newSimCluster()), CAPTURED);
    const refused = sim.flatMap((e) => {
      const real = captured(e);
      return real && real.code >= 400 ? [{ e, real }] : [];
    });
    expect(refused.length, "refusals in the capture").toBeGreaterThan(10);
    const answers = (pick: "sim" | "real") =>
      Object.fromEntries(
        refused.map(({ e, real }) => [
          e.name,
          pick === "sim"
            ? { status: e.status, body: projection(e, CAPTURED) }
            : { status: real.code, body: projection({ ...e, body: real.body }, CAPTURED) },
        ]),
      );
    expect(answers("sim")).toEqual(answers("real"));
  });
});
