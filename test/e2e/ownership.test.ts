// Issue 35 on the real server (kube-apiserver + kube-controller-manager v1.34): after a rollout
// that the admission webhook turned a template edit into, and the re-create that ends it, the
// tools that applied the set find the object they applied. Everything runs as deployed: the
// webhook from deploy/kubernetes/admission.yaml (its own `claimstep serve` over TLS), and
// deployment.yaml's `claimstep serve` (two replicas, the Lease) stepping the sets; nobody runs
// claimstep by hand. The person only runs kubectl, as each tool would apply:
//   - `kubectl apply --server-side` (manager kubectl, no force): succeeds after the re-create;
//   - the same with `--field-manager=helm` (what Helm 4 sends): succeeds;
//   - `--field-manager=kustomize-controller --force-conflicts` (Flux), then the manifest without an
//     annotation and an env var: both gone from the live set (nobody else owns them);
//   - client-side `kubectl apply` (Helm 3, Argo CD's default): still succeeds.
// The managedFields before the change and after the re-create are printed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  describeKubectl,
  freePort,
  kubectl,
  kubectlPath,
  makeWebhookCerts,
  registerWebhook,
  startWebhookServer,
  type WebhookCerts,
  type WebhookServer,
  waitWebhookLive,
  webhookConfigurationFor,
} from "./support/admission-webhook.js";
import { type Deployed, startDeployment } from "./support/deployed.js";
import { describeAudit, type KubeObject, ok, storageClass, useControlPlane, waitFor } from "./support/index.js";
import { isReady, setPods, templateClaims } from "./support/scenario-templates.js";

const KUBECTL = kubectlPath();
const e2e = useControlPlane({ prefix: "ownership", needsFakeDriver: true });
const RECORD = (set: string) => `claimstep-recreate-${set}`;

beforeEach((ctx) => {
  if (!KUBECTL) ctx.skip("kubectl not on PATH: these scenarios are what kubectl, Helm and Flux send");
});

let certs: WebhookCerts | undefined;
let webhook: WebhookServer | undefined;
let deployed: Deployed | undefined;
let webhookName = "";
let sc = "";
let dir = "";
const report: string[] = [];

beforeAll(async () => {
  if (!e2e.available || !KUBECTL) return;
  dir = mkdtempSync(join(tmpdir(), "claimstep-e2e-ownership-"));
  sc = `${e2e.namespace}-fast`;
  ok(await e2e.admin.create("storageclasses", null, storageClass(sc, { resizeLatencyMs: 300 })), `create ${sc}`);
  certs = makeWebhookCerts();
  const port = await freePort();
  webhook = await startWebhookServer(e2e, certs, port);
  webhookName = `claimstep-${e2e.namespace}`;
  await registerWebhook(
    e2e.admin,
    webhookConfigurationFor({ name: webhookName, port, caPem: certs.caPem, namespaces: [e2e.namespace] }),
  );
  ok(await e2e.api.create("statefulsets", manifest("probe", { replicas: 0 })), "create probe");
  await waitWebhookLive(e2e, "probe", "2Gi");
  deployed = await startDeployment(e2e, { env: { CLAIMSTEP_INTERVAL_SECONDS: "2" } });
  await deployed.waitSweeper();
}, 120_000);

afterAll(async () => {
  await deployed?.stop();
  if (webhookName) await e2e.admin.delete("mutatingwebhookconfigurations", null, webhookName).catch(() => undefined);
  await webhook?.stop();
  if (sc) await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (report.length)
    console.log(
      `issue 35, field ownership after the re-create (${e2e.info.version}; ${deployed?.command ?? "no deployment"}):\n${report.join("\n")}`,
    );
}, 60_000);

interface Options {
  replicas?: number;
  size?: string;
  /** An annotation and an env var that a later manifest drops (Flux's case). */
  extras?: boolean;
}

function manifest(name: string, o: Options = {}): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name,
      labels: { app: name, "claimstep.io/admission": "enabled" },
      ...(o.extras ? { annotations: { "example.com/drop-me": "from-git" } } : {}),
    },
    spec: {
      replicas: o.replicas ?? 2,
      serviceName: name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { app: name } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "app",
              image: "registry.example/app:1",
              ...(o.extras ? { env: [{ name: "DROP_ME", value: "from-git" }] } : {}),
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: sc,
            resources: { requests: { storage: o.size ?? "1Gi" } },
          },
        },
      ],
    },
  };
}

function file(name: string, m: KubeObject, tag: string): string {
  const path = join(dir, `${name}-${tag}.yaml`);
  writeFileSync(path, stringify(m));
  return path;
}

/** kubectl apply as a tool sends it. */
async function apply(name: string, m: KubeObject, tag: string, how: readonly string[]) {
  const r = await kubectl(e2e, ["apply", ...how, "-f", file(name, m, tag)]);
  return r;
}

const getSet = async (name: string): Promise<KubeObject> => ok(await e2e.api.get("statefulsets", name), name);

/** A managedFields entry as the API server returns it. */
type Entry = any;
const entriesOf = (set: KubeObject): Entry[] => (set.metadata.managedFields ?? []) as Entry[];

/** `manager/operation[/subresource]: the fields it owns, in brief`, one line per entry. */
function describeOwners(set: KubeObject): string {
  const leaves = (node: unknown, path: string[] = []): string[] => {
    const keys = node && typeof node === "object" ? Object.keys(node).filter((k) => k !== ".") : [];
    if (!keys.length) return [path.join(".")];
    return keys.flatMap((k) => leaves((node as Record<string, unknown>)[k], [...path, k.replace(/^f:/, "")]));
  };
  return entriesOf(set)
    .map((e) => {
      const fields = leaves(e.fieldsV1);
      const shown = fields.filter((f) => !/^(metadata\.labels|spec\.template\.spec\.containers)/.test(f)).slice(0, 6);
      return `    ${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ""}: ${fields.length} field(s): ${shown.join(", ")}${fields.length > shown.length ? ", …" : ""}`;
    })
    .join("\n");
}

const ownerOf = (set: KubeObject, manager: string, operation: string): Entry =>
  entriesOf(set).find((e) => e.manager === manager && e.operation === operation && !e.subresource);

async function waitRunning(name: string, replicas: number, size: string) {
  await waitFor(
    async () => {
      const s = (await e2e.api.get("statefulsets", name)).body;
      const pods = await setPods(e2e, name);
      const claims = await templateClaims(e2e, name, "data");
      return (
        s.status?.readyReplicas === replicas &&
        pods.filter(isReady).length === replicas &&
        claims.length === replicas &&
        claims.every((c) => c.status?.phase === "Bound" && c.status?.capacity?.storage === size)
      );
    },
    {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `StatefulSet ${name}: ${replicas} pods Ready, claims Bound at ${size}`,
    },
  );
}

/** Re-created (another uid), Complete, the record gone: the deployed serve finished it. */
async function waitRecreated(name: string, oldUid: string) {
  await waitFor(
    async () => {
      const s = (await e2e.api.get("statefulsets", name)).body;
      if (s?.metadata?.uid === undefined || s.metadata.uid === oldUid) return false;
      const status = JSON.parse(s.metadata.annotations?.["claimstep.io/status"] ?? "{}");
      const record = await e2e.api.get("configmaps", RECORD(name));
      return status.phase === "Complete" && record.status === 404;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: `StatefulSet ${name} re-created by the deployed serve, Complete, its record gone`,
    },
  );
}

/** The change through the webhook, then the re-create by the deployed serve. */
async function changeAndRecreate(name: string, first: KubeObject, how: readonly string[]) {
  const before = await getSet(name);
  const m2 = structuredClone(first);
  m2.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
  const change = await apply(name, m2, "v2", how);
  expect(change.code, describeKubectl(change)).toBe(0);
  await waitRecreated(name, before.metadata.uid!);
  await waitRunning(name, first.spec.replicas, "2Gi");
  const after = await getSet(name);
  return { before, after, m2 };
}

describe.concurrent("after the re-create, each tool applies the set it applied before", () => {
  it("kubectl apply --server-side (no force): succeeds; kubectl owns the templates again, claimstep only its annotations", {
    timeout: 180_000,
  }, async () => {
    const name = "ssa";
    const m1 = manifest(name);
    const created = await apply(name, m1, "v1", ["--server-side"]);
    expect(created.code, describeKubectl(created)).toBe(0);
    await waitRunning(name, 2, "1Gi");
    const { before, after, m2 } = await changeAndRecreate(name, m1, ["--server-side"]);
    const again = await apply(name, m2, "v2-again", ["--server-side"]);
    report.push(
      `kubectl apply --server-side: uid ${before.metadata.uid!.slice(0, 8)} → ${after.metadata.uid!.slice(0, 8)}\n  managedFields before the change:\n${describeOwners(before)}\n  after the re-create:\n${describeOwners(after)}\n  $ kubectl apply --server-side -f web.yaml (unchanged) → exit ${again.code}: ${(again.stdout + again.stderr).trim()}`,
    );
    expect(again.code, describeKubectl(again)).toBe(0);
    expect(ownerOf(after, "kubectl", "Apply")?.fieldsV1?.["f:spec"]?.["f:volumeClaimTemplates"]).toBeDefined();
    const mine = ownerOf(after, "claimstep", "Update");
    const claimstepOwns = JSON.stringify(mine?.fieldsV1 ?? {});
    expect(Object.keys(mine?.fieldsV1 ?? {}), claimstepOwns).toEqual(["f:metadata"]);
    expect(Object.keys(mine?.fieldsV1?.["f:metadata"] ?? {}), claimstepOwns).toEqual(["f:annotations"]);
    for (const k of Object.keys(mine.fieldsV1["f:metadata"]["f:annotations"]).filter((x) => x !== "."))
      expect(k, claimstepOwns).toMatch(/^f:claimstep\.io\//);
  });

  it("Helm 4 (server-side apply as manager helm, no force): the next upgrade succeeds", {
    timeout: 180_000,
  }, async () => {
    const name = "helm";
    const helm = ["--server-side", "--field-manager=helm"];
    const m1 = manifest(name);
    const created = await apply(name, m1, "v1", helm);
    expect(created.code, describeKubectl(created)).toBe(0);
    await waitRunning(name, 2, "1Gi");
    const { after, m2 } = await changeAndRecreate(name, m1, helm);
    const upgrade = structuredClone(m2);
    upgrade.spec.template.spec.containers[0].image = "registry.example/app:2";
    const again = await apply(name, upgrade, "v3", helm);
    report.push(
      `Helm 4 (--field-manager=helm):\n  after the re-create:\n${describeOwners(after)}\n  $ kubectl apply --server-side --field-manager=helm (image app:2) → exit ${again.code}: ${(again.stdout + again.stderr).trim()}`,
    );
    expect(again.code, describeKubectl(again)).toBe(0);
    expect((await getSet(name)).spec.template.spec.containers[0].image).toBe("registry.example/app:2");
  });

  it("Flux (server-side apply with force as kustomize-controller): an annotation and an env var dropped from Git are gone from the live set", {
    timeout: 180_000,
  }, async () => {
    const name = "flux";
    const flux = ["--server-side", "--field-manager=kustomize-controller", "--force-conflicts"];
    const m1 = manifest(name, { extras: true });
    const created = await apply(name, m1, "v1", flux);
    expect(created.code, describeKubectl(created)).toBe(0);
    await waitRunning(name, 2, "1Gi");
    const { m2 } = await changeAndRecreate(name, m1, flux);
    const dropped = structuredClone(m2);
    delete dropped.metadata.annotations;
    delete dropped.spec.template.spec.containers[0].env;
    const again = await apply(name, dropped, "v3", flux);
    expect(again.code, describeKubectl(again)).toBe(0);
    const live = await getSet(name);
    report.push(
      `Flux (kustomize-controller, force): after dropping example.com/drop-me and env DROP_ME from Git → annotation ${live.metadata.annotations?.["example.com/drop-me"] ?? "gone"}, env ${JSON.stringify(live.spec.template.spec.containers[0].env ?? "gone")}\n${describeOwners(live)}`,
    );
    expect(live.metadata.annotations?.["example.com/drop-me"], "the annotation dropped from Git").toBeUndefined();
    expect(live.spec.template.spec.containers[0].env, "the env var dropped from Git").toBeUndefined();
  });

  it("client-side kubectl apply (Helm 3, Argo CD's default): still succeeds after the re-create", {
    timeout: 180_000,
  }, async () => {
    const name = "csa";
    const m1 = manifest(name);
    const created = await apply(name, m1, "v1", []);
    expect(created.code, describeKubectl(created)).toBe(0);
    await waitRunning(name, 2, "1Gi");
    const { m2 } = await changeAndRecreate(name, m1, []);
    const upgrade = structuredClone(m2);
    upgrade.spec.template.spec.containers[0].image = "registry.example/app:2";
    const again = await apply(name, upgrade, "v3", []);
    report.push(
      `client-side kubectl apply (image app:2) → exit ${again.code}: ${(again.stdout + again.stderr).trim()}`,
    );
    expect(again.code, describeKubectl(again)).toBe(0);
    const claimDeletes = e2e
      .audit({ resource: "persistentvolumeclaims" })
      .filter((a) => a.verb === "delete" || a.verb === "deletecollection");
    expect(describeAudit(claimDeletes), "no claim deleted by anyone").toBe("");
  });
});
