// The CLI as bin/claimstep.js runs it (the process's own SIGINT/SIGTERM), on a scenario's simulated
// cluster held between the orphan delete and the create: once the set is gone, "HELD" goes to
// stderr and the run waits there until a signal comes (test/functions/cli-interrupt.test.ts kills
// it then). Usage: node --import tsx test/support/interrupted-cli.ts <scenario> <claimstep args…>
import { main, processInterrupts } from "../../functions/cli.js";
import { simOf } from "./cli-target.js";

const [scenario, ...argv] = process.argv.slice(2);
let held = false;
const s = await simOf(scenario!, async (sim) => {
  if (held || sim.get("statefulsets", "default", "web") || !sim.get("configmaps", "default", "claimstep-recreate-web"))
    return;
  held = true;
  const signalled = new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  // A promise alone keeps no process alive: a timer does, until the signal.
  const alive = setInterval(() => undefined, 1000);
  process.stderr.write("HELD\n");
  await signalled;
  clearInterval(alive);
});
process.exitCode = await main(
  argv,
  { stdout: process.stdout, stderr: process.stderr, env: process.env, interrupts: processInterrupts() },
  s.connect,
);
const set = s.sim.get("statefulsets", "default", "web");
const record = s.sim.get("configmaps", "default", "claimstep-recreate-web");
process.stderr.write(`after: set ${set ? "present" : "missing"}, record ${record ? "kept" : "gone"}\n`);
