// Issue 35 item 2 on the real server: claimstep's webhook fails closed. The MutatingWebhookConfiguration
// of deploy/kubernetes/admission.yaml (failurePolicy Fail, the has() matchCondition), pointed at a port
// where nothing listens (claimstep down), in front of kube-apiserver v1.34: a template edit of an
// opted-in set is refused with the webhook's error (500 "failed calling webhook …"), never the 422
// Invalid that Flux's force answers by deleting the set; every other update of an opted-in set (scale,
// a label, an image change, a set with no volumeClaimTemplates at all) passes. Then the planted bugs:
// failurePolicy Ignore gives the 422 Invalid; the matchCondition without has() refuses every update of
// a set without templates.
import { rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import {
  describeKubectl,
  freePort,
  kubectl,
  kubectlPath,
  makeWebhookCerts,
  registerWebhook,
  type WebhookCerts,
  webhookConfigurationFor,
} from "./support/admission-webhook.js";
import { type E2E, type KubeObject, ok, useControlPlane, waitFor } from "./support/index.js";

const KUBECTL = kubectlPath();
const ADMISSION_LABEL = "claimstep.io/admission";
const FORBIDDEN = "Forbidden: updates to statefulset spec for fields other than";
const WEBHOOK = "statefulsets.admission.claimstep.io";
const NS_WEBHOOK = "namespaces.admission.claimstep.io";

// Sets labelled claimstep.io/admission=enabled (the webhook's first entry) …
const e2e = useControlPlane({ prefix: "failclosed" });
// … and the sets of a namespace so labelled (the second entry).
const nsE2e = useControlPlane({ prefix: "failclosed-ns", labels: { [ADMISSION_LABEL]: "enabled" } });

beforeEach((ctx) => {
  if (!KUBECTL) ctx.skip("kubectl not on PATH: the scenarios drive the API server through kubectl");
});

let certs: WebhookCerts | undefined;
let port = 0;
let webhookName = "";
const answers: string[] = [];

/** The shipped configuration, served by 127.0.0.1:<port> where nothing listens, with `change` applied to each entry. */
function configuration(change: (w: any) => void = () => {}): KubeObject {
  const cfg = webhookConfigurationFor({
    name: webhookName,
    port,
    caPem: certs!.caPem,
    namespaces: [e2e.namespace, nsE2e.namespace],
  });
  for (const w of cfg.webhooks as any[]) change(w);
  return cfg;
}

/** A set without pods; labelled claimstep.io/admission=enabled unless `optIn` is false (the labelled namespace's sets). */
function manifest(
  name: string,
  o: { size?: string; image?: string; templates?: boolean; optIn?: boolean } = {},
): KubeObject {
  const templates = o.templates !== false;
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, labels: { app: name, ...(o.optIn === false ? {} : { [ADMISSION_LABEL]: "enabled" }) } },
    spec: {
      replicas: 0,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: "app",
              image: o.image ?? "registry.example/app:1",
              ...(templates ? { volumeMounts: [{ name: "data", mountPath: "/data" }] } : {}),
            },
          ],
        },
      },
      ...(templates
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: "data" },
                spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: o.size ?? "1Gi" } } },
              },
            ],
          }
        : {}),
    },
  };
}

const resize = (size: string) => [
  { op: "replace", path: "/spec/volumeClaimTemplates/0/spec/resources/requests/storage", value: size },
];

/** The answer to a template edit (a JSON patch, dry run) of `name` in `t`'s namespace. */
async function templateEdit(t: E2E, name: string, dryRun = true) {
  return t.admin.patch("statefulsets", t.namespace, name, resize("2Gi"), "json", dryRun ? { dryRun: "All" } : {});
}

/** Registers `cfg` and waits until a dry-run template edit of `probe` gets `want` (the API server's informer has it). */
async function install(cfg: KubeObject, probe: string, want: (r: { status: number; body: any }) => boolean) {
  await registerWebhook(e2e.admin, cfg);
  await waitFor(
    async () => {
      const r = await templateEdit(e2e, probe);
      return want(r) ? r : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 300, what: `the configuration in effect for ${probe}` },
  );
}

const failedCalling = (r: { status: number; body: any }) =>
  r.status === 500 && String(r.body?.message).includes("failed calling webhook");

beforeAll(async () => {
  if (!e2e.available || !nsE2e.available || !KUBECTL) return;
  certs = makeWebhookCerts();
  port = await freePort(); // nothing listens there: claimstep is down
  webhookName = `claimstep-${e2e.namespace}`;
  for (const t of [e2e, nsE2e]) {
    const optIn = t === e2e;
    ok(await t.api.create("statefulsets", manifest("web", { optIn })));
    ok(await t.api.create("statefulsets", manifest("plain", { templates: false, optIn })));
  }
  // Planted bug (failurePolicy Ignore shipped): the wait ends without the webhook's error after 30 s,
  // and the first scenario below fails showing the 422 Invalid the server answered instead.
  await install(configuration(), "web", failedCalling).catch(() => undefined);
}, 120_000);

afterAll(async () => {
  if (webhookName) await e2e.admin.delete("mutatingwebhookconfigurations", null, webhookName).catch(() => undefined);
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
  if (answers.length)
    console.log(
      `real-server answers with claimstep's webhook down (${inject("claimstepE2E")?.version ?? "no cluster"}):\n${answers.join("\n")}`,
    );
}, 60_000);

describe("issue 35: the shipped webhook configuration fails closed (claimstep down)", () => {
  it("the shipped configuration is failurePolicy Fail with the has() matchCondition", () => {
    for (const w of configuration().webhooks as any[]) {
      expect(w.failurePolicy).toBe("Fail");
      expect(w.matchConditions).toHaveLength(1);
      expect(w.matchConditions[0].expression).toContain("has(object.spec.volumeClaimTemplates)");
    }
  });

  it("a template edit of an opted-in set is refused with the webhook's error, not 422 Invalid; nothing written", async () => {
    for (const [t, hook] of [
      [e2e, WEBHOOK],
      [nsE2e, NS_WEBHOOK],
    ] as const) {
      const before = (await t.api.get("statefulsets", "web")).body;
      // kubectl apply of the manifest with a bigger template.
      const file = `${certs!.dir}/${t.namespace}-web-2Gi.json`;
      writeFileSync(file, JSON.stringify(manifest("web", { size: "2Gi", optIn: t === e2e })));
      const r = await kubectl(t, ["apply", "-f", file]);
      expect(r.code, describeKubectl(r)).toBe(1);
      expect(r.stderr, describeKubectl(r)).toContain(`failed calling webhook "${hook}"`);
      expect(r.stderr, describeKubectl(r)).not.toContain("is invalid");
      expect(r.stderr).not.toContain(FORBIDDEN);
      const patch = await templateEdit(t, "web", false);
      expect(patch.status, JSON.stringify(patch.body)).toBe(500);
      expect(patch.body).toMatchObject({ reason: "InternalError" });
      expect(String(patch.body.message)).toMatch(
        new RegExp(
          `^Internal error occurred: failed calling webhook "${hook.replace(/\./g, "\\.")}": failed to call webhook: Post "https://127\\.0\\.0\\.1:${port}/`,
        ),
      );
      const after = (await t.api.get("statefulsets", "web")).body;
      // Nothing of the edit was written. Not the resourceVersion: the StatefulSet controller may write
      // the set's status meanwhile (a CI run saw 4122 → 4129 with the spec unchanged).
      expect(after.metadata.generation, "nothing written: generation").toBe(before.metadata.generation);
      expect(after.spec, "nothing written: spec").toEqual(before.spec);
      expect(after.metadata.annotations ?? {}, "nothing written: annotations").toEqual(
        before.metadata.annotations ?? {},
      );
      answers.push(`Fail, template edit (${hook}): kubectl apply → ${r.stderr.trim().split("\n").at(-1)}`);
      answers.push(`Fail, template edit (${hook}): PATCH → ${patch.status} ${patch.body.message}`);
    }
  });

  it("every other update of an opted-in set passes: scale, a label, an image change; a set with no volumeClaimTemplates", async () => {
    for (const t of [e2e, nsE2e]) {
      for (const name of ["web", "plain"]) {
        const steps: [string, string[]][] = [
          ["kubectl scale", ["scale", `statefulset/${name}`, "--replicas=1"]],
          ["kubectl patch replicas", ["patch", `statefulset/${name}`, "--type=merge", "-p", '{"spec":{"replicas":0}}']],
          ["kubectl label", ["label", `statefulset/${name}`, "tier=db", "--overwrite"]],
          ["kubectl set image", ["set", "image", `statefulset/${name}`, "app=registry.example/app:2"]],
        ];
        for (const [what, args] of steps) {
          const r = await kubectl(t, args);
          expect(r.code, `${what}: ${describeKubectl(r)}`).toBe(0);
        }
        // kubectl apply of the manifest with everything but the templates changed.
        const file = `${certs!.dir}/${t.namespace}-${name}-image3.json`;
        const m = manifest(name, { image: "registry.example/app:3", templates: name === "web", optIn: t === e2e });
        (m.spec as any).replicas = 1;
        writeFileSync(file, JSON.stringify(m));
        const r = await kubectl(t, ["apply", "-f", file]);
        expect(r.code, describeKubectl(r)).toBe(0);
        const live = (await t.api.get("statefulsets", name)).body;
        expect(live.spec.replicas).toBe(1);
        expect(live.spec.template.spec.containers[0].image).toBe("registry.example/app:3");
        expect(live.metadata.labels?.tier).toBe("db");
        expect(live.spec.volumeClaimTemplates === undefined).toBe(name === "plain");
        // back to no pods
        ok(await t.api.patch("statefulsets", name, { spec: { replicas: 0 } }, "merge"));
      }
    }
    answers.push(
      "Fail, every other update (scale, replicas, label, image, apply; sets with and without templates): accepted",
    );
  });

  it("planted bug: failurePolicy Ignore turns the same edit into the API server's 422 Invalid", async () => {
    await install(
      configuration((w) => (w.failurePolicy = "Ignore")),
      "web",
      (r) => r.status === 422,
    );
    for (const t of [e2e, nsE2e]) {
      const r = await templateEdit(t, "web", false);
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body).toMatchObject({ reason: "Invalid" });
      expect(String(r.body.message)).toContain(FORBIDDEN);
      answers.push(`Ignore, template edit: PATCH → ${r.status} ${r.body.reason} ${r.body.message}`);
    }
  });

  it("planted bug: the matchCondition without has() refuses every update of a set without templates (403)", async () => {
    const naive = "object.spec.volumeClaimTemplates != oldObject.spec.volumeClaimTemplates";
    await registerWebhook(
      e2e.admin,
      configuration((w) => (w.matchConditions = [{ name: "volume-claim-templates-changed", expression: naive }])),
    );
    const r = await waitFor(
      async () => {
        const a = await e2e.admin.patch(
          "statefulsets",
          e2e.namespace,
          "plain",
          { metadata: { labels: { tier: "x" } } },
          "merge",
          {
            dryRun: "All",
          },
        );
        return a.status !== 200 ? a : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 300, what: "the naive matchCondition in effect" },
    );
    // The API server refuses with the CEL error (403), whatever the webhook's server does.
    expect(r.status, JSON.stringify(r.body)).toBe(403);
    expect(String(r.body.message)).toBe(
      `statefulsets.apps "plain" is forbidden: expression '${naive}' resulted in error: no such key: volumeClaimTemplates`,
    );
    answers.push(`Fail without has(), a label on a set without templates: ${r.status} ${r.body.message}`);
    // The shipped one again: the same update passes.
    await registerWebhook(e2e.admin, configuration());
    await waitFor(
      async () =>
        (
          await e2e.admin.patch(
            "statefulsets",
            e2e.namespace,
            "plain",
            { metadata: { labels: { tier: "y" } } },
            "merge",
            {
              dryRun: "All",
            },
          )
        ).status === 200 || undefined,
      { timeoutMs: 30_000, intervalMs: 300, what: "the shipped matchCondition in effect again" },
    );
  });
});
