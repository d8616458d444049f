// The deployment files: manifests that reference what exists (service accounts, secrets, CLI
// commands, configuration variables), a relay that may only list and watch, one image set through
// kustomize, and a Dockerfile whose numeric user is the manifests' runAsUser/runAsGroup.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const ROOT = new URL("../..", import.meta.url).pathname;
const docs = (file: string): any[] =>
  parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes", file), "utf8")).map((d) => d.toJS());
const podSpecOf = (o: any) => (o.kind === "CronJob" ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec);
const CONFIG_VARS =
  readFileSync(join(ROOT, "functions/config.ts"), "utf8") +
  readFileSync(join(ROOT, "functions/http/tls-files.ts"), "utf8");
const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; files: string[] };

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** A Dockerfile's stages: continuation lines joined, comment and blank lines dropped (as Docker parses it). */
function dockerfileStages(text: string): Stage[] {
  const logical: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = "";
  }
  if (pending) logical.push(pending.trim());
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op = "", args = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { op: op.toUpperCase(), args };
    if (instruction.op === "FROM") {
      const [from = "", as, name] = args.split(/\s+/);
      stages.push({ from, ...(as?.toUpperCase() === "AS" && name ? { name } : {}), instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile: ${op} before FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** The user and group of USER uid:gid, both numeric; throws on anything else (a name cannot be verified non-root). */
function numericUser(user: string): { uid: number; gid: number } {
  const m = /^(\d+):(\d+)$/.exec(user.trim());
  if (!m) throw new Error(`USER ${user}: not numeric uid:gid (the kubelet cannot verify a named user is non-root)`);
  return { uid: Number(m[1]), gid: Number(m[2]) };
}

const STAGES = dockerfileStages(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
const RUNTIME = STAGES.at(-1)!;
const ops = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);
/** The image's user: the last USER of the runtime stage. */
const imageUser = () => numericUser(ops(RUNTIME, "USER").at(-1) ?? "root");

describe("Kubernetes manifests", () => {
  const rbac = docs("rbac.yaml");
  const workloads = [
    ...docs("deployment.yaml"),
    ...docs("cronjob.yaml"),
    ...docs("relay.yaml"),
    ...docs("admission.yaml"),
  ].filter((o) => ["Deployment", "CronJob"].includes(o.kind));
  const accounts = [...rbac, ...docs("relay.yaml")]
    .filter((o) => o.kind === "ServiceAccount")
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

  it("run under existing service accounts, non-root, read-only, without capabilities", () => {
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual([
      "claimstep",
      "claimstep",
      "claimstep-relay",
      "claimstep-webhook",
    ]);
    const image = imageUser();
    for (const w of workloads) {
      const pod = podSpecOf(w);
      expect(accounts).toContain(`${w.metadata.namespace}/${pod.serviceAccountName}`);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      // The kubelet can only verify runAsNonRoot with a numeric user: the image's, in the pod.
      expect(pod.securityContext, w.metadata.name).toMatchObject({ runAsUser: image.uid, runAsGroup: image.gid });
      for (const c of pod.containers) {
        for (const key of ["runAsUser", "runAsGroup"] as const) {
          if (c.securityContext?.[key] !== undefined)
            expect(c.securityContext[key], `${c.name} ${key}`).toBe(pod.securityContext[key]);
        }
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
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
    expect(role.rules.flatMap((r: any) => r.resources).sort()).toEqual([
      "persistentvolumeclaims",
      "pods",
      "statefulsets",
    ]);
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

  it("take their image from kustomization.yaml (images:), at the package's version", () => {
    const [kustomization] = docs("kustomization.yaml");
    const files = readdirSync(join(ROOT, "deploy/kubernetes")).filter(
      (f) => f.endsWith(".yaml") && f !== "kustomization.yaml",
    );
    for (const r of kustomization.resources) expect(files, r).toContain(r);
    // Every manifest is a resource, but the CronJob, the alternative to the server (see the comment),
    // the admission webhook, which needs cert-manager's CRDs or `claimstep admission certs`, its
    // NetworkPolicy, which needs the API server's addresses filled in (a placeholder would shut the
    // API server out), and the cluster-wide finalize Role, opt-in (issue 24).
    expect(
      [
        ...kustomization.resources,
        "cronjob.yaml",
        "admission.yaml",
        "admission-network-policy.yaml",
        "rbac-finalize.yaml",
      ].sort(),
    ).toEqual(files.sort());
    const names = new Map<string, any>(kustomization.images.map((i: any) => [i.name, i]));
    for (const w of workloads) {
      for (const c of podSpecOf(w).containers) {
        const [name, tag] = c.image.split(":");
        expect(names.has(name), `${w.metadata.name}: image ${c.image} has an images: entry`).toBe(true);
        expect(tag, `${w.metadata.name}: ${c.image}`).toBe(PACKAGE.version);
      }
    }
    for (const i of names.values()) expect(String(i.newTag)).toBe(PACKAGE.version);
  });
});

describe("the admission webhook (admission.yaml)", () => {
  const all = docs("admission.yaml");
  const config = all.find((o) => o.kind === "MutatingWebhookConfiguration");
  const service = all.find((o) => o.kind === "Service");
  const deployment = all.find((o) => o.kind === "Deployment");
  const certificate = all.find((o) => o.kind === "Certificate");

  it("is called only for UPDATEs of opted-in StatefulSets whose templates changed, and fails closed, fast", async () => {
    const { ADMISSION_PATH } = await import("../../functions/routes/admission.js");
    const { ADMISSION_LABEL, ADMISSION_ENABLED } = await import("../../core/change/admission.js");
    expect(config.webhooks).toHaveLength(2);
    for (const w of config.webhooks) {
      expect(w.rules).toEqual([
        {
          apiGroups: ["apps"],
          apiVersions: ["v1"],
          operations: ["UPDATE"],
          resources: ["statefulsets"],
          scope: "Namespaced",
        },
      ]);
      expect(w.matchConditions).toEqual([
        {
          name: "volume-claim-templates-changed",
          expression:
            "has(object.spec.volumeClaimTemplates) != has(oldObject.spec.volumeClaimTemplates) ||" +
            " (has(object.spec.volumeClaimTemplates) && object.spec.volumeClaimTemplates != oldObject.spec.volumeClaimTemplates)",
        },
      ]);
      expect(w).toMatchObject({
        failurePolicy: "Fail",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        reinvocationPolicy: "Never",
      });
      expect(w.timeoutSeconds).toBeLessThanOrEqual(10);
      expect(w.clientConfig.service).toMatchObject({
        name: service.metadata.name,
        namespace: service.metadata.namespace,
        port: service.spec.ports[0].port,
      });
      expect(w.clientConfig.service.path).not.toContain("?"); // the API server refuses a query in a service path
      expect(w.clientConfig.service.path.startsWith(ADMISSION_PATH)).toBe(true);
    }
    const [bySet, byNamespace] = config.webhooks;
    expect(bySet.objectSelector).toEqual({ matchLabels: { [ADMISSION_LABEL]: ADMISSION_ENABLED } });
    expect(byNamespace.namespaceSelector).toEqual({ matchLabels: { [ADMISSION_LABEL]: ADMISSION_ENABLED } });
    // A labelled set in a labelled namespace is called once (by the first entry).
    expect(byNamespace.objectSelector).toEqual({
      matchExpressions: [{ key: ADMISSION_LABEL, operator: "NotIn", values: [ADMISSION_ENABLED] }],
    });
    expect(bySet.clientConfig.service.path).toBe(ADMISSION_PATH);
    expect(byNamespace.clientConfig.service.path).toBe(`${ADMISSION_PATH}/by-namespace`);
  });

  it("serves HTTPS from the certificate cert-manager writes, for the Service's DNS names, its CA injected", () => {
    const container = podSpecOf(deployment).containers[0];
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value]));
    expect(env.CLAIMSTEP_INTERVAL_SECONDS).toBe("0");
    const mount = container.volumeMounts.find((m: any) => m.name === "tls");
    expect(env.CLAIMSTEP_TLS_CERT_FILE).toBe(`${mount.mountPath}/tls.crt`);
    expect(env.CLAIMSTEP_TLS_KEY_FILE).toBe(`${mount.mountPath}/tls.key`);
    expect(podSpecOf(deployment).volumes.find((v: any) => v.name === "tls").secret.secretName).toBe(
      certificate.spec.secretName,
    );
    expect(container.readinessProbe.httpGet).toMatchObject({ path: "/healthz", scheme: "HTTPS" });
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(certificate.spec.dnsNames).toContain(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    expect(config.metadata.annotations["cert-manager.io/inject-ca-from"]).toBe(
      `${certificate.metadata.namespace}/${certificate.metadata.name}`,
    );
  });
});

describe("the admission webhook's NetworkPolicy (admission-network-policy.yaml, issue 37)", () => {
  const [policy] = docs("admission-network-policy.yaml");
  const all = docs("admission.yaml");
  const deployment = all.find((o) => o.kind === "Deployment");
  const service = all.find((o) => o.kind === "Service");
  const container = podSpecOf(deployment).containers[0];

  it("selects the webhook's pods and lets in only ipBlocks (the API server), on the webhook's port only", () => {
    expect(policy).toMatchObject({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy" });
    expect(policy.metadata.namespace).toBe(deployment.metadata.namespace);
    expect(policy.spec.podSelector).toEqual({ matchLabels: deployment.spec.selector.matchLabels });
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress;
    expect(rule.from.length).toBeGreaterThan(0);
    for (const peer of rule.from) expect(Object.keys(peer)).toEqual(["ipBlock"]); // no pod or namespace selector
    // The port the Service sends to (its targetPort, by name) is the container's, and the policy's only one.
    const target = container.ports.find((p: any) => p.name === service.spec.ports[0].targetPort);
    expect(target).toBeDefined();
    expect(container.args[container.args.indexOf("--port") + 1]).toBe(String(target.containerPort));
    expect(rule.ports).toEqual([{ protocol: "TCP", port: target.containerPort }]);
  });

  it("is opt-in beside admission.yaml (its placeholder would shut the API server out), and the body deadline is the webhook's timeoutSeconds", async () => {
    const [kustomization] = docs("kustomization.yaml");
    expect(kustomization.resources).not.toContain("admission-network-policy.yaml");
    expect(readFileSync(join(ROOT, "deploy/kubernetes/kustomization.yaml"), "utf8")).toMatch(
      /^# {3}- admission\.yaml\n# {3}- admission-network-policy\.yaml$/m,
    );
    const { BODY_DEADLINE_MS } = await import("../../functions/http/body.js");
    for (const w of all.find((o) => o.kind === "MutatingWebhookConfiguration").webhooks)
      expect(w.timeoutSeconds * 1000).toBe(BODY_DEADLINE_MS);
  });
});

describe("Dockerfile", () => {
  it("builds and runs on one Node.js LTS line that CI tests (.ci/run's other lines, issue 39), within engines", () => {
    const froms = [
      ...readFileSync(join(ROOT, "Dockerfile"), "utf8").matchAll(/^FROM node:(\d+)\.(\d+)\.(\d+)-bookworm-slim\b/gm),
    ];
    expect(froms).toHaveLength(2);
    expect(new Set(froms.map((m) => m.slice(1, 4).join(".")))).toHaveProperty("size", 1);
    const major = Number(froms[0]![1]);
    const tested = /^for major in ([\d ]+); do$/m.exec(readFileSync(join(ROOT, ".ci/run"), "utf8"));
    expect(tested, ".ci/run's loop over the LTS lines").not.toBeNull();
    expect(tested![1]!.split(" ").map(Number)).toContain(major);
    const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } })
      .engines.node;
    expect(engines).toBe(">=20.19");
    expect(major).toBeGreaterThanOrEqual(20);
  });

  it("runs as a numeric non-root user and group, the manifests' runAsUser/runAsGroup", () => {
    const image = imageUser();
    expect(image.uid).toBeGreaterThan(0);
    expect(image.gid).toBeGreaterThan(0);
    expect(() => numericUser("node")).toThrow(/not numeric/);
    expect(() => numericUser("65532")).toThrow(/not numeric/);
    expect(() => numericUser("65532:node")).toThrow(/not numeric/);
    expect(numericUser("65532:65532")).toEqual({ uid: 65532, gid: 65532 });
  });

  it("starts the compiled CLI with node, in exec form (no shell at run time, no tsx)", async () => {
    const [entrypoint, cmd] = [ops(RUNTIME, "ENTRYPOINT"), ops(RUNTIME, "CMD")].map(
      (a) => JSON.parse(a.at(-1) ?? "null") as string[] | null,
    );
    expect(entrypoint?.[0]).toBe("node");
    expect(entrypoint?.[1]).toBe("/app/bin/claimstep.js");
    const { HELP } = await import("../../functions/cli.js");
    expect(HELP).toContain(`claimstep ${cmd?.[0]}`);
    for (const i of RUNTIME.instructions) expect(`${i.op} ${i.args}`).not.toMatch(/tsx|\.ts\b/);
  });

  it("builds as the package does (npm ci, npm run build, dev dependencies pruned) and copies dist/, node_modules and package.json", () => {
    const [build] = STAGES;
    const runs = ops(build!, "RUN").join(" && ");
    expect(runs).toMatch(/npm ci\b/);
    expect(runs).toMatch(/npm run build\b/);
    expect(runs).toMatch(/npm prune --omit=dev\b/);
    expect(runs.indexOf("npm run build")).toBeLessThan(runs.indexOf("npm prune"));
    // What the build stage copies from the repository exists; tsconfig.build.json among it.
    const copied = ops(build!, "COPY").flatMap((a) => a.split(/\s+/).slice(0, -1));
    for (const src of copied) expect(existsSync(join(ROOT, src)), src).toBe(true);
    expect(copied).toContain("tsconfig.build.json");
    // The runtime stage takes the compiled directories the package ships, and nothing uncompiled.
    const fromBuild = ops(RUNTIME, "COPY")
      .map((a) => a.split(/\s+/))
      .filter((w) => w[0] === `--from=${build!.name}`)
      .map((w) => w[1]!.replace(/^\/src\//, ""));
    const shipped = PACKAGE.files
      .map((f) => f.replace(/\/$/, ""))
      .filter((f) => f.startsWith("dist/") || f.startsWith("bin/"));
    expect(fromBuild.sort()).toEqual(["node_modules", "package.json", ...shipped].sort());
    const tsconfig = JSON.parse(
      readFileSync(join(ROOT, "tsconfig.build.json"), "utf8").replace(/^\s*\/\/.*$/gm, ""),
    ) as { include: string[]; compilerOptions: { outDir: string } };
    expect(tsconfig.include.map((d) => `${tsconfig.compilerOptions.outDir}/${d}`).sort()).toEqual(
      shipped.filter((f) => f.startsWith("dist/")).sort(),
    );
  });
});
