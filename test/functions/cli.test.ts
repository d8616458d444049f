// The CLI in process: the live terminal display, what each command writes (the simulated
// cluster's audit log), timeouts, and kubectl-style access through a kubeconfig to the msw fake.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { main, parseDuration, type Target } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";

// NO_COLOR: these tests read the layout; colour on a terminal is tested in cli-manners.test.ts.
const capture = (isTTY = false) => {
  const out = { text: "", isTTY, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["5s", 5000],
    ["2m", 120_000],
    ["1h", 3_600_000],
    ["1.5s", 1500],
    ["7", 7000],
  ])("%s → %d ms", (s, ms) => expect(parseDuration(s, "interval")).toBe(ms));

  it("rejects other forms naming the flag", () => {
    expect(() => parseDuration("fast", "interval")).toThrow(/--interval "fast": expected a duration/);
  });
});

describe("commands in process", () => {
  it("run redraws one live view in place on a terminal, ending on Complete", async () => {
    const { sim, connect } = await simOf("grow");
    const { io, out } = capture(true);
    expect(await main(["run", "web"], io, connect)).toBe(0);
    const frames = out.text.split(/\x1b\[\d+A\x1b\[0J/);
    expect(frames.length).toBeGreaterThan(3); // the first draw, then one redraw per step
    const last = frames.at(-1)!;
    expect(last).toMatch(/default\/web {2}Complete {2}RolloutComplete/);
    expect(last).toMatch(/step \d+ · \d+s · sim grow · nothing to apply/);
    expect(last.match(/ORDINAL/g)).toHaveLength(1);
    expect(sim.now().getTime()).toBeGreaterThan(new Date("2026-11-30T10:10:00Z").getTime()); // virtual time moved
  });

  it("counts wrapped lines when it moves back up", async () => {
    const { connect } = await simOf("grow");
    const { io, out } = capture(true);
    Object.assign(out, { rows: 1000, columns: 20 });
    expect(await main(["run", "web"], io, connect)).toBe(0);
    const ups = [...out.text.matchAll(/\x1b\[(\d+)A/g)].map((m) => Number(m[1]));
    const firstFrame = out.text.split(/\x1b\[\d+A/)[0]!.replace(/\n$/, "");
    const rows = firstFrame.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil(l.length / 20)), 0);
    expect(ups[0]).toBe(rows);
    expect(rows).toBeGreaterThan(firstFrame.split("\n").length);
  });

  it("redraws from the top of the screen when the view is taller than the terminal", async () => {
    const { connect } = await simOf("grow");
    const { io, out } = capture(true);
    (out as { rows?: number }).rows = 5;
    expect(await main(["run", "web"], io, connect)).toBe(0);
    expect(out.text).toMatch(/\x1b\[H\x1b\[2J/);
    expect(out.text).not.toMatch(/\x1b\[\d+A/);
  });

  it("plan and step --dry-run write nothing; step writes once", async () => {
    const s = await simOf("grow");
    const before = s.claimstepWrites();
    expect(await main(["plan", "web"], capture().io, s.connect)).toBe(0);
    expect(await main(["step", "web", "--dry-run"], capture().io, s.connect)).toBe(0);
    expect(s.claimstepWrites()).toBe(before);
    const { io, out } = capture();
    expect(await main(["step", "web"], io, s.connect)).toBe(0);
    expect(out.text).toMatch(/applied default\/data-web-2/);
    const claim = (await s.sim.admin.get("persistentvolumeclaims", "default", "data-web-2")) as any;
    expect(claim.spec.resources.requests.storage).toBe("2Gi");
  });

  it("status shows where the set stands (the plan of its next step), as a table and as JSON", async () => {
    const s = await simOf("grow");
    const none = capture();
    expect(await main(["status"], none.io, s.connect)).toBe(0);
    // No step yet: the desired revision, not yet observed, and what the first step will do.
    expect(none.out.text).toMatch(
      /default +web +- +NotObserved +0\/3 +(\w+) +- +no step recorded for revision \1 yet .*; the next step: updating data-web-2/,
    );
    await main(["run", "web"], capture().io, s.connect);
    const table = capture();
    expect(await main(["status"], table.io, s.connect)).toBe(0);
    expect(table.out.text).toMatch(/default +web +Complete +RolloutComplete +3\/3/);
    const json = capture();
    await main(["status", "web", "-o", "json"], json.io, s.connect);
    const status = JSON.parse(json.out.text);
    expect(status).toMatchObject({
      strategy: "InPlace",
      phase: "Complete",
      reason: "RolloutComplete",
      updated: "3/3",
      observed: true,
      done: true,
      setMissing: false,
      next: { phase: "Complete", action: "nothing to write" },
      status: { phase: "Complete" },
    });
    expect(status.currentRevision).toBe(status.updateRevision);
    expect(status.revision).toBe(status.updateRevision);
  });

  it("status exits 2 when a set is blocked", async () => {
    const s = await simOf("blocked");
    await main(["step", "web"], capture().io, s.connect);
    const { io, out } = capture();
    expect(await main(["status"], io, s.connect)).toBe(2);
    expect(out.text).toMatch(/Blocked +ExpansionNotAllowed/);
  });

  it("set then run: the new size rolls out", async () => {
    const s = await simOf("opted-out");
    expect(await main(["set", "web", "data", "--storage", "4Gi"], capture().io, s.connect)).toBe(0);
    const set = (await s.sim.admin.get("statefulsets", "default", "web")) as any;
    expect(set.metadata.annotations[Keys.strategy]).toBe("InPlace");
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const claim = (await s.sim.admin.get("persistentvolumeclaims", "default", "data-web-0")) as any;
    expect(claim.status.capacity.storage).toBe("4Gi");
  });

  it("set with a VAC the cluster lacks is refused before anything is written, exit 1", async () => {
    const s = await simOf("opted-out");
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--storage", "2Gi", "--vac", "platinum"], io, s.connect)).toBe(1);
    expect(err.text).toMatch(
      /VolumeAttributesClass "platinum" not found \(the cluster has: gold, silver\); nothing written/,
    );
    expect(s.claimstepWrites()).toBe(0);
  });

  it("run --timeout gives up with exit 1 while the set still progresses", async () => {
    const s = await simOf("grow");
    const { io, err } = capture();
    expect(await main(["run", "web", "--interval", "1s", "--timeout", "2s"], io, s.connect)).toBe(1);
    expect(err.text).toMatch(/default\/web is still (Waiting|Progressing) .* after 2s/);
  });

  it("run waits the decision's requeueAfter, with --interval as the cap", async () => {
    const s = await simOf("grow");
    const pauses: number[] = [];
    const target: Target = { ...s.target, pause: async (ms) => void (pauses.push(ms), s.sim.advance(ms)) };
    const { io, out } = capture();
    expect(await main(["run", "web", "--interval", "7s", "-o", "json"], io, async () => target)).toBe(0);
    const steps = out.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { decision: { phase: string; requeueAfter?: number } });
    const phases = steps.map((x) => x.decision.phase);
    expect(phases.at(-1)).toBe("Complete");
    expect(steps.at(-1)!.decision.requeueAfter).toBeUndefined();
    // One pause after every step but the last: 2 s after a write, the 10 s driver pace capped at 7 s while waiting.
    expect(pauses).toEqual(steps.slice(0, -1).map((x) => Math.min(x.decision.requeueAfter! * 1000, 7000)));
    expect(pauses).toContain(2000);
    expect(pauses).toContain(7000);
    expect(Math.max(...pauses)).toBeLessThanOrEqual(7000);
  });

  it("step --all steps every opted-in set; exit 2 when one is blocked", async () => {
    const s = await simOf("grow");
    const { io, out } = capture();
    expect(await main(["step", "--all"], io, s.connect)).toBe(0);
    expect(out.text).toBe(
      "default/web  Progressing  ClaimUpdated  updating data-web-2: storage 1Gi → 2Gi; revision 5b48d59cf5  (applied default/data-web-2: storage 2Gi)\n",
    );
    const blocked = await simOf("blocked");
    const json = capture();
    expect(await main(["step", "--all", "-A", "-o", "json"], json.io, blocked.connect)).toBe(2);
    expect(JSON.parse(json.out.text)).toMatchObject({
      found: 1,
      stepped: [{ phase: "Blocked", reason: "ExpansionNotAllowed" }],
    });
    expect(await main(["step", "web", "--all"], capture().io, s.connect)).toBe(1);
  });

  it("serve and relay refuse to start without what they need", async () => {
    const serve = capture();
    expect(await main(["serve", "--cluster", "sim"], serve.io)).toBe(1);
    expect(serve.err.text).toMatch(/no authentication configured: set CLAIMSTEP_API_TOKEN/);
    const noUrl = capture();
    expect(await main(["relay"], noUrl.io)).toBe(1);
    expect(noUrl.err.text).toMatch(/relay: give --url/);
    const sim = capture();
    expect(await main(["relay", "--url", "http://x/v1/relay", "--cluster", "sim"], sim.io)).toBe(1);
    expect(sim.err.text).toMatch(/^claimstep relay: --cluster is not a flag of relay: relay watches a real cluster/);
    const noSecret = capture();
    expect(await main(["relay", "--url", "http://x/v1/relay"], noSecret.io)).toBe(1);
    expect(noSecret.err.text).toMatch(/set CLAIMSTEP_WEBHOOK_SECRET/);
    const badUrl = capture();
    badUrl.io.env = { CLAIMSTEP_WEBHOOK_SECRET: `whsec_${btoa("0123456789abcdef0123")}` } as never;
    expect(await main(["relay", "--url", "claimstep/v1/relay"], badUrl.io)).toBe(1);
    expect(badUrl.err.text).toMatch(/is not an absolute URL/);
  });

  it("usage errors exit 1", async () => {
    const s = await simOf("grow");
    for (const argv of [
      ["run"],
      ["plan", "web", "-o", "timeline"],
      ["set", "web"],
      ["set", "web", "data"],
      ["run", "web", "--interval", "soon"],
    ]) {
      const { io, err } = capture();
      expect(await main(argv, io, s.connect), argv.join(" ")).toBe(1);
      expect(err.text).toMatch(/^claimstep( \w+)?: /);
    }
    const none = capture();
    expect(await main([], none.io)).toBe(1);
    expect(none.out.text).toMatch(/Usage:/);
  });
});

describe("kubectl-style access (kubeconfig, context, namespace) against the fake API server", () => {
  // Served on a socket: the kubeconfig fetch goes through node:http with the kubeconfig's agent.
  let kube: SocketSim;
  const dir = mkdtempSync(join(tmpdir(), "claimstep-kubeconfig-"));
  const kubeconfig = join(dir, "config");

  beforeAll(async () => {
    kube = await serveSim({ token: "cli-user-token" });
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster: {server: "${kube.url}", insecure-skip-tls-verify: true}
  - name: elsewhere
    cluster: {server: "https://elsewhere.test:6443"}
users:
  - name: cli
    user: {token: cli-user-token}
contexts:
  - name: prod
    context: {cluster: test, user: cli, namespace: db}
  - name: other
    context: {cluster: elsewhere, user: cli}
current-context: other
`,
    );
    kube.fake.seed(
      ...storageClassObjects(),
      ...statefulSetObjects({ namespace: "db", desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
    );
  });
  afterAll(async () => {
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("plans with --kubeconfig and --context, in the context's namespace", async () => {
    const { io, out, err } = capture();
    expect(await main(["plan", "web", "--kubeconfig", kubeconfig, "--context", "prod", "-o", "json"], io)).toBe(0);
    expect(err.text).toBe("");
    expect(JSON.parse(out.text).decision).toMatchObject({
      ref: { namespace: "db", name: "web" },
      action: { claim: "data-web-2" },
    });
    expect(kube.fake.http.counters().writes).toBe(0);
  });

  it("--namespace overrides the context's", async () => {
    const { io, err } = capture();
    expect(await main(["plan", "web", "--kubeconfig", kubeconfig, "--context", "prod", "-n", "default"], io)).toBe(1);
    expect(err.text).toMatch(/StatefulSet default\/web not found/);
  });

  it("set writes both annotations in one merge patch under the resourceVersion it read", async () => {
    kube.fake.http.resetCounters();
    const before: any = kube.fake.get("statefulsets", "db", "web");
    const { io, out, err } = capture();
    expect(
      await main(["set", "web", "data", "--storage", "3Gi", "--kubeconfig", kubeconfig, "--context", "prod"], io),
    ).toBe(0);
    expect(err.text).toBe("");
    expect(out.text).toMatch(/^db\/web: desired data storage 3Gi \(revision \w+\); opted in \(InPlace\)/);
    const patches = kube.fake.http.requests().filter((r) => r.verb === "patch");
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({
      resource: "statefulsets",
      name: "web",
      contentType: "application/merge-patch+json",
    });
    const body = patches[0]!.body as any;
    expect(body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(Object.keys(body.metadata.annotations).sort()).toEqual([Keys.strategy, Keys.templates].sort());
    const after: any = kube.fake.get("statefulsets", "db", "web");
    expect(JSON.parse(after.metadata.annotations[Keys.templates])[0].spec.resources.requests.storage).toBe("3Gi");
  });

  it("set loses a race with another writer: it reads again and writes its change, the other writer's kept", async () => {
    kube.fake.http.beforeNext("patch statefulsets", () => {
      kube.fake.update("statefulsets", "db", "web", (o: any) => (o.spec.replicas = 5));
    });
    const { io, err } = capture();
    expect(
      await main(["set", "web", "data", "--storage", "9Gi", "--kubeconfig", kubeconfig, "--context", "prod"], io),
    ).not.toBe(1);
    expect(err.text).toBe("");
    const after: any = kube.fake.get("statefulsets", "db", "web");
    expect(after.metadata.annotations[Keys.templates]).toContain("9Gi");
    expect(after.spec.replicas).toBe(5);
  });

  it("set losing every race (4 attempts): exit 1 with the server's words, nothing written", async () => {
    for (let i = 0; i < 4; i++)
      kube.fake.http.beforeNext("patch statefulsets", () => {
        kube.fake.update("statefulsets", "db", "web", (o: any) => (o.spec.replicas = 6 + i));
      });
    const { io, err } = capture();
    expect(
      await main(["set", "web", "data", "--storage", "11Gi", "--kubeconfig", kubeconfig, "--context", "prod"], io),
    ).toBe(1);
    expect(err.text).toMatch(/the object has been modified/);
    const after: any = kube.fake.get("statefulsets", "db", "web");
    expect(after.metadata.annotations[Keys.templates]).not.toContain("11Gi");
  });

  it("an unknown context is an error listing the known ones", async () => {
    const { io, err } = capture();
    expect(await main(["plan", "web", "--kubeconfig", kubeconfig, "--context", "nope"], io)).toBe(1);
    expect(err.text).toMatch(/kubeconfig has no context "nope" \(it has: prod, other\)/);
  });
});
