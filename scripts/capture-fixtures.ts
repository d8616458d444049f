// npm run fixtures:capture — the conformance script (test/e2e/support/conformance-script.ts) run
// against a real control plane started here (CLAIMSTEP_KUBE_ASSETS: kube-apiserver and
// kube-controller-manager; etcd there or on PATH), its answers written as
// test/fixtures/apiserver/v1.34/<name>.txt (the body, then the status code on the last line, like
// the other .txt fixtures) with an index README.md; then the control plane is stopped.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  fixtureText,
  realSide,
  runConformanceScript,
  type ScriptNames,
} from "../test/e2e/support/conformance-script.js";
import { admin, ok, startControlPlane } from "../test/e2e/support/control-plane.js";
import { NAMESPACE_LABEL, startNodeAgent } from "../test/e2e/support/node-agent.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(repoRoot, "test/fixtures/apiserver/v1.34");

async function main(): Promise<void> {
  const assets = process.env.CLAIMSTEP_KUBE_ASSETS;
  if (!assets) {
    console.error(
      "fixtures:capture needs CLAIMSTEP_KUBE_ASSETS=<dir with kube-apiserver and kube-controller-manager> (etcd there or on PATH)",
    );
    process.exit(2);
  }
  const t0 = Date.now();
  const cp = await startControlPlane({ assetsDir: assets, log: (l) => console.error(l) });
  try {
    const names: ScriptNames = {
      namespace: "fx",
      fast: "fast",
      fixed: "fixed",
      silver: "silver",
      gold: "gold",
      lease: "claimstep-conformance",
      leaseNamespace: "claimstep",
    };
    ok(
      await admin(cp).create("namespaces", null, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: names.namespace, labels: { [NAMESPACE_LABEL]: names.namespace } },
      }),
      `create namespace ${names.namespace}`,
    );
    const agent = await startNodeAgent(cp, { namespaces: [names.namespace] });
    let exchanges;
    try {
      exchanges = await runConformanceScript(realSide(cp), names);
    } finally {
      await agent.stop();
    }
    mkdirSync(out, { recursive: true });
    for (const f of readdirSync(out)) if (f.endsWith(".txt")) rmSync(join(out, f));
    const rows: string[] = [];
    for (const e of exchanges) {
      writeFileSync(join(out, `${e.name}.txt`), fixtureText(e));
      const query = Object.keys(e.query).length ? `?${new URLSearchParams(e.query)}` : "";
      rows.push(
        `| ${e.name}.txt | ${e.as} | \`${e.method} ${e.path}${query}\`${e.contentType && e.method !== "GET" ? ` (${e.contentType})` : ""} | ${e.status} |`,
      );
    }
    writeFileSync(
      join(out, "README.md"),
      [
        "# Real API server responses (v1.34)",
        "",
        `Written by \`npm run fixtures:capture\` (scripts/capture-fixtures.ts) from ${cp.version} (feature gates ${cp.featureGates.join(", ") || "default"}), with the`,
        "controllers of test/e2e/support/control-plane.ts and the node agent: the answers to the conformance script",
        "(test/e2e/support/conformance-script.ts), which test/e2e/conformance.test.ts also sends to the simulated cluster.",
        "Namespace `fx`, StatefulSet `web` (2 replicas, templates `data` on class `fast` (expansion allowed up to 4Gi) with",
        "VolumeAttributesClass `silver`, and `cold` on class `fixed`), PodDisruptionBudget `web`; claimstep's requests as its",
        "ServiceAccount with the shipped RBAC. Each file: the body, then the status code on the last line.",
        "",
        "| file | as | request | status |",
        "|---|---|---|---|",
        ...rows,
        "",
      ].join("\n"),
    );
    console.error(`fixtures:capture: ${exchanges.length} answers written to ${out} in ${Date.now() - t0} ms`);
  } finally {
    await cp.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
