// `claimstep apply -f`: a StatefulSet manifest sent as server-side apply; on the simulated cluster
// of scenario apply (claimstep's webhook installed) a bigger template is accepted with claimstep's
// warning; --dry-run writes nothing; clear errors for what is not one StatefulSet and for the 422.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { CLAIMSTEP_WEBHOOK_SERVER } from "../../adapters/sim/claimstep-webhook.js";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../adapters/sim/http.js";
import { applyScenarioManifest } from "../../adapters/sim/scenarios.js";
import { WEBHOOK_DOWN, warningTexts } from "../../functions/cli/apply.js";
import { main, type Target } from "../../functions/cli.js";
import { SCENARIOS } from "../../functions/scenarios.js";

const dir = mkdtempSync(join(tmpdir(), "claimstep-apply-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const manifestFile = (storage: string, change: (m: any) => void = () => {}) => {
  const m: any = applyScenarioManifest(storage);
  delete m.metadata.namespace;
  change(m);
  return file(`web-${storage}-${Math.random().toString(36).slice(2)}.yaml`, YAML.stringify(m));
};

async function simApply(): Promise<{ sim: SimCluster; connect: () => Promise<Target> }> {
  const sim = await SCENARIOS.apply!.build();
  const target: Target = {
    label: "sim apply",
    namespace: "default",
    reader: sim.reader,
    writers: sim.writers,
    listOptedIn: async () => [],
    now: () => sim.now(),
    pause: async (ms) => sim.advance(ms),
    api: () => ({ server: SIM_SERVER, fetch: sim.http.fetchLike }),
  };
  return { sim, connect: async () => target };
}

const live = (sim: SimCluster) => sim.get("statefulsets", "default", "web")!;
const desired = (sim: SimCluster) =>
  JSON.parse(live(sim).metadata.annotations["claimstep.io/volume-claim-templates"]) as any[];

describe("claimstep apply", () => {
  it("on sim:apply: a bigger template goes through claimstep's webhook — its warning, 'configured', spec kept, the annotation at 3Gi; again: 'unchanged'", async () => {
    const { sim, connect } = await simApply();
    const path = manifestFile("3Gi");
    const { io, out, err } = capture();
    expect(await main(["apply", "-f", path], io, connect)).toBe(0);
    expect(err.text).toMatch(
      /^Warning: claimstep will grow data-web-\* to 3Gi one ordinal at a time; see `claimstep status web`\nWarning: claimstep: This change ends in a re-create of StatefulSet default\/web once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claimstep\.io\/finalize: Recreate, written by claimstep for this change only \(claimstep\.io\/finalize-for: \w+; later changes roll out in place\)\.\n$/,
    );
    expect(out.text).toBe("statefulset.apps/web configured\n");
    expect(live(sim).spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("1Gi");
    expect(desired(sim)[0].spec.resources.requests.storage).toBe("3Gi");
    const applied = sim.audit.filter((e) => e.actor === "claimstep-apply" && e.verb === "patch");
    expect(applied.map((e) => e.outcome)).toEqual(["ok"]);
    const version = live(sim).metadata.resourceVersion;
    const again = capture();
    expect(await main(["apply", "-f", path], again.io, connect)).toBe(0);
    expect(again.out.text).toBe("statefulset.apps/web unchanged\n");
    expect(live(sim).metadata.resourceVersion).toBe(version);
  });

  it("--dry-run: the server's answer and claimstep's warning, nothing written", async () => {
    const { sim, connect } = await simApply();
    const before = live(sim);
    const writes = sim.audit.length;
    const { io, out, err } = capture();
    expect(await main(["apply", "-f", manifestFile("5Gi"), "--dry-run"], io, connect)).toBe(0);
    expect(err.text).toContain("Warning: claimstep will grow data-web-* to 5Gi");
    expect(err.text).toContain("Warning: claimstep: This change ends in a re-create of StatefulSet default/web");
    expect(out.text).toBe("statefulset.apps/web configured (server dry run)\n");
    expect(live(sim)).toEqual(before);
    expect(sim.audit.length).toBe(writes);
  });

  it("-o json prints the object the server answered", async () => {
    const { connect } = await simApply();
    const { io, out } = capture();
    expect(await main(["apply", "-f", manifestFile("3Gi"), "-o", "json"], io, connect)).toBe(0);
    const set = JSON.parse(out.text);
    expect(set.kind).toBe("StatefulSet");
    expect(
      JSON.parse(set.metadata.annotations["claimstep.io/volume-claim-templates"])[0].spec.resources.requests.storage,
    ).toBe("3Gi");
  });

  it("a set that is not opted in: the server's 422, with the fix; nothing written (exit 1)", async () => {
    const { sim, connect } = await simApply();
    // The label off first, as a person would (the webhook still sees the old object labelled).
    await sim.admin.mergePatch(
      "statefulsets",
      "default",
      "web",
      { metadata: { labels: null } },
      { fieldManager: "kubectl" },
    );
    const before = live(sim);
    const { io, out, err } = capture();
    expect(await main(["apply", "-f", manifestFile("3Gi", (m) => delete m.metadata.labels)], io, connect)).toBe(1);
    expect(out.text).toBe("");
    expect(err.text).toContain(
      `claimstep apply: statefulset.apps/web in default: StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals'`,
    );
    expect(err.text).toContain(
      "label the set claimstep.io/admission=enabled or install the webhook: docs/admission.md. Nothing was written.",
    );
    expect(live(sim)).toEqual(before);
  });

  it("claimstep's webhook down: the server's 500 (failurePolicy Fail), with what to do; nothing written (exit 1)", async () => {
    const { sim, connect } = await simApply();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, () => new Response("busy", { status: 503 }));
    const before = live(sim);
    const { io, out, err } = capture();
    expect(await main(["apply", "-f", manifestFile("3Gi")], io, connect)).toBe(1);
    expect(out.text).toBe("");
    expect(err.text).toMatch(
      /^claimstep apply: statefulset\.apps\/web in default: Internal error occurred: failed calling webhook "statefulsets\.admission\.claimstep\.io": /,
    );
    expect(err.text).toContain(`${WEBHOOK_DOWN}\n`);
    expect(err.text).not.toContain("is invalid");
    expect(live(sim)).toEqual(before);
  });

  it("clear errors: no -f, a missing file, several documents, not a StatefulSet, invalid YAML, a namespace that disagrees", async () => {
    const { connect } = await simApply();
    const cases: [string[], RegExp][] = [
      [["apply"], /apply: name the manifest: claimstep apply -f sts\.yaml/],
      [["apply", "-f", join(dir, "nope.yaml")], /apply: .*nope\.yaml: no such file/],
      [
        [
          "apply",
          "-f",
          file("two.yaml", `${YAML.stringify(applyScenarioManifest())}---\n${YAML.stringify(applyScenarioManifest())}`),
        ],
        /holds 2 documents: claimstep apply takes one StatefulSet/,
      ],
      [
        ["apply", "-f", file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")],
        /holds v1 ConfigMap, not an apps\/v1 StatefulSet/,
      ],
      [["apply", "-f", file("empty.yaml", "# nothing\n")], /holds no document/],
      [["apply", "-f", file("bad.yaml", "kind: [StatefulSet\n")], /is not valid YAML or JSON/],
      [
        ["apply", "-f", file("ns.json", JSON.stringify(applyScenarioManifest())), "-n", "db"],
        /the namespace from the provided object "default" does not match the namespace "db"/,
      ],
      [["apply", "-f", manifestFile("2Gi"), "web"], /unexpected argument "web"/],
    ];
    for (const [argv, message] of cases) {
      const { io, err } = capture();
      expect(await main(argv, io, connect), argv.join(" ")).toBe(1);
      expect(err.text).toMatch(message);
    }
  });

  it("--help shows the usage, the flags and examples", async () => {
    const { io, out } = capture();
    expect(await main(["apply", "--help"], io)).toBe(0);
    expect(out.text).toContain("claimstep apply -f <sts.yaml | -> [--dry-run] [flags]");
    expect(out.text).toMatch(/-f, --filename <file>/);
    expect(out.text).toContain("claimstep apply -f web.yaml --cluster sim:apply");
  });

  it("warningTexts reads the Warning header as fetch joins several", () => {
    expect(warningTexts('299 - "one, two", 299 - "with \\"quotes\\""')).toEqual(["one, two", 'with "quotes"']);
    expect(warningTexts(null)).toEqual([]);
  });
});
