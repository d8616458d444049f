// The deployment files: manifests that reference what exists (service accounts, secrets, CLI
// commands, configuration variables), a relay that may only list and watch, and the Dockerfile's
// bundling step producing a CLI that runs.
import { execFileSync, execSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const docs = (file: string): any[] => parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes", file), "utf8")).map((d) => d.toJS());
const podSpecOf = (o: any) => (o.kind === "CronJob" ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec);
const CONFIG_VARS = readFileSync(join(ROOT, "functions/config.ts"), "utf8");

describe("Kubernetes manifests", () => {
  const rbac = docs("rbac.yaml");
  const workloads = [...docs("deployment.yaml"), ...docs("cronjob.yaml"), ...docs("relay.yaml")].filter((o) => ["Deployment", "CronJob"].includes(o.kind));
  const accounts = [...rbac, ...docs("relay.yaml")].filter((o) => o.kind === "ServiceAccount").map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

  it("run under existing service accounts, non-root, read-only, without capabilities", () => {
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual(["claimstep", "claimstep", "claimstep-relay"]);
    for (const w of workloads) {
      const pod = podSpecOf(w);
      expect(accounts).toContain(`${w.metadata.namespace}/${pod.serviceAccountName}`);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
        expect(c.resources.limits.memory).toBeDefined();
      }
    }
  });

  it("run CLI commands that exist, with configuration variables claimstep reads", async () => {
    const { HELP } = await import("../../functions/cli.js");
    for (const w of workloads) {
      for (const c of podSpecOf(w).containers) {
        expect(HELP).toContain(`claimstep ${c.args[0]}`);
        for (const e of c.env ?? []) {
          expect(CONFIG_VARS.includes(e.name) || e.name === "CLAIMSTEP_RELAY_URL", e.name).toBe(true);
        }
      }
    }
  });

  it("serve on every interface of the pod (claimstep serve binds 127.0.0.1 unless told)", () => {
    const deployment = docs("deployment.yaml").find((o) => o.kind === "Deployment");
    const args: string[] = podSpecOf(deployment).containers[0].args;
    expect(args[args.indexOf("--host") + 1]).toBe("0.0.0.0");
    expect(readFileSync(join(ROOT, "Dockerfile"), "utf8")).toMatch(/^ENV CLAIMSTEP_HOST=0\.0\.0\.0$/m);
  });

  it("give the relay list and watch only", () => {
    const role = docs("relay.yaml").find((o) => o.kind === "ClusterRole");
    const verbs = new Set(role.rules.flatMap((r: any) => r.verbs));
    expect([...verbs].sort()).toEqual(["list", "watch"]);
    expect(role.rules.flatMap((r: any) => r.resources).sort()).toEqual(["persistentvolumeclaims", "pods", "statefulsets"]);
  });

  it("probe /healthz and expose the app through a Service", () => {
    const deployment = docs("deployment.yaml").find((o) => o.kind === "Deployment");
    const container = podSpecOf(deployment).containers[0];
    expect(container.readinessProbe.httpGet.path).toBe("/healthz");
    const service = docs("deployment.yaml").find((o) => o.kind === "Service");
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    // The relay posts to that Service.
    const relay = docs("relay.yaml").find((o) => o.kind === "Deployment");
    const url = podSpecOf(relay).containers[0].env.find((e: any) => e.name === "CLAIMSTEP_RELAY_URL").value;
    expect(url).toBe(`http://${service.metadata.name}.${service.metadata.namespace}.svc/v1/relay`);
  });
});

describe("Dockerfile", () => {
  it("its bundling step produces a CLI that runs a rollout on the simulated cluster", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    const step = /RUN (printf [\s\S]*?--outfile=dist\/claimstep\.mjs)/.exec(dockerfile)?.[1];
    expect(step).toBeDefined();
    const out = `dist/claimstep-test-${process.pid}.mjs`;
    try {
      execSync(step!.replace(/\\\n\s*/g, " ").replace("dist/claimstep.mjs", out), { cwd: ROOT, stdio: "pipe", shell: "/bin/bash" });
      const bundle = readFileSync(join(ROOT, out), "utf8");
      expect(bundle).not.toContain("tsx/esm");
      let code = 0;
      let stdout = "";
      try {
        stdout = execFileSync(process.execPath, [join(ROOT, out), "run", "web", "--cluster", "sim"], { cwd: ROOT, encoding: "utf8" });
      } catch (err) {
        code = (err as { status: number }).status;
      }
      expect(code).toBe(0);
      expect(stdout).toMatch(/Complete {2}RolloutComplete/);
    } finally {
      rmSync(join(ROOT, out), { force: true });
    }
  }, 60_000);
});
