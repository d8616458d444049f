// Issue 39 point 6: what run, finalize and status say. -o timeline prints no empty `ordinals:` line
// and the plain lines no `0/0 updated` while the set is deleted mid re-create; a scenario's story is
// told only by a run that starts from the set as the scenario set it up; finalize's suggestion names
// the cluster it was run against; a set without claim templates is not told to opt in.
import { describe, expect, it } from "vitest";
import { main } from "../../../functions/cli.js";
import { simOf } from "../../support/cli-target.js";

// The simulated clusters `--cluster sim` keeps go to this file's state directory (test/support/state-home.ts).
const STATE_ENV = { XDG_STATE_HOME: process.env.XDG_STATE_HOME };

const capture = () => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: STATE_ENV }, out, err };
};

const cli = async (...argv: string[]) => {
  const c = capture();
  const code = await main(argv, c.io);
  return { code, out: c.out.text, err: c.err.text };
};

describe("run while the set is re-created", () => {
  it("-o timeline: no empty ordinals line; the progress before the re-create is not repeated after it", async () => {
    const r = await cli("run", "web", "--cluster", "sim:remove-template", "--sim-state", "none", "-o", "timeline");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/Progressing\/SetCreated/);
    expect(r.out).not.toMatch(/ordinals: *\n/);
    expect(r.out.match(/ordinals: 2 Updated · 1 Updated · 0 Updated\n/g)).toHaveLength(1);
  });

  it("plain lines: no 0/0 updated for the step that creates the set again", async () => {
    const r = await cli("run", "web", "--cluster", "sim:remove-template", "--sim-state", "none");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/ {2}Progressing {2}SetCreated {2}creating StatefulSet default\/web/);
    expect(r.out).not.toMatch(/0\/0 updated/);
  });
});

describe("a scenario's story", () => {
  it("is told by a run from the scenario's start, not once the set was changed back", async () => {
    const first = await cli("run", "web", "--cluster", "sim:remove-template", "-o", "timeline");
    expect(first.out).toMatch(
      /^claimstep run · simulated cluster \(remove-template\): web has claim templates data and cache/,
    );
    expect(first.out).toMatch(/the set was re-created without cache/);
    // cache added back, then run again: the story of its removal is not told.
    const add = await cli(
      "set",
      "web",
      "cache",
      "--add",
      "--storage",
      "1Gi",
      "--storage-class",
      "fast",
      "--mount-path",
      "/cache",
      "--cluster",
      "sim:remove-template",
    );
    expect(add.code, add.err).toBe(0);
    const again = await cli("run", "web", "--cluster", "sim:remove-template", "-o", "timeline");
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(
      /^claimstep run · simulated cluster \(remove-template\): web as it stands, changed since the scenario set it up \(claimstep sim reset --cluster sim:remove-template starts it over\)/,
    );
    expect(again.out).not.toMatch(/re-created without cache/);
  });
});

describe("finalize's suggestion", () => {
  it("names the simulated cluster: claimstep run web … --cluster sim", async () => {
    await cli("sim", "reset", "--cluster", "sim:grow");
    const r = await cli("finalize", "web", "--cluster", "sim:grow");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/run `claimstep run web -n default --cluster sim:grow` first\. Nothing written/);
  });
});

describe("a set without claim templates", () => {
  it("is not told to opt in: it has nothing for claimstep to update", async () => {
    const s = await simOf("opted-out");
    await s.sim.admin.create(
      "statefulsets",
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "cache", namespace: "default" },
        spec: {
          replicas: 1,
          serviceName: "cache",
          selector: { matchLabels: { app: "cache" } },
          template: { metadata: { labels: { app: "cache" } }, spec: { containers: [{ name: "app", image: "redis" }] } },
        },
      },
      { fieldManager: "kubectl" },
    );
    for (const argv of [
      ["plan", "cache"],
      ["status", "cache"],
    ]) {
      const c = capture();
      const code = await main(argv, c.io, s.connect);
      const text = c.out.text + c.err.text;
      expect(code, argv.join(" ")).toBe(0);
      expect(text, argv.join(" ")).toMatch(
        /cache has no volumeClaimTemplates: claimstep has no claims of it to update \(claimstep set cache <template> --add --storage 1Gi adds one\)/,
      );
      expect(text, argv.join(" ")).not.toMatch(/set it to InPlace/);
    }
  });
});
