// `claimstep admission certs` on the real server (issue 23: the way without cert-manager), as a
// cluster admin would run it: the MutatingWebhookConfiguration of deploy/kubernetes/admission.yaml
// gets the new CA in every entry's caBundle, the Secret the webhook mounts gets a serving
// certificate for the Service's DNS names signed by that CA; a second run rotates both.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ROOT, runClaimstep } from "../support/spawn-cli.js";
import { NAMESPACE_LABEL, ok, useControlPlane } from "./support/index.js";

const e2e = useControlPlane({ prefix: "certs" });
const NAME = "claimstep"; // the name admission.yaml ships and the command patches
/** The shipped matchCondition (issue 35: has(), so that failurePolicy Fail never errs on a set without templates). */
const CHANGED =
  "has(object.spec.volumeClaimTemplates) != has(oldObject.spec.volumeClaimTemplates) || " +
  "(has(object.spec.volumeClaimTemplates) && object.spec.volumeClaimTemplates != oldObject.spec.volumeClaimTemplates)";

/** The shipped configuration, narrowed to this test's namespace so that no other file's update calls it. */
function shippedConfiguration(namespace: string): any {
  const docs = parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes/admission.yaml"), "utf8")).map((d) =>
    d.toJS(),
  );
  const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration");
  for (const w of config.webhooks) w.namespaceSelector = { matchLabels: { [NAMESPACE_LABEL]: namespace } };
  delete config.metadata.annotations; // no cert-manager here
  return config;
}

afterAll(async () => {
  if (e2e.available) await e2e.admin.delete("mutatingwebhookconfigurations", null, NAME);
});

describe("claimstep admission certs (real server)", () => {
  it("writes a CA into every caBundle and a serving certificate into the Secret, read back; again rotates them", async () => {
    ok(
      await e2e.admin.create("mutatingwebhookconfigurations", null, shippedConfiguration(e2e.namespace)),
      "create the shipped MutatingWebhookConfiguration",
    );
    const run = () =>
      runClaimstep(
        ["admission", "certs", "-n", e2e.namespace, "--kubeconfig", e2e.info.adminKubeconfig, "--no-color"],
        { KUBECONFIG: e2e.info.adminKubeconfig },
        60_000,
      );

    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(
        `secret/claimstep-webhook-tls configured in ${e2e.namespace}: a certificate for claimstep-webhook\\.${e2e.namespace}\\.svc, .* \\(read back\\)`,
      ),
    );
    expect(first.stdout).toMatch(
      /caBundle set on statefulsets\.admission\.claimstep\.io, namespaces\.admission\.claimstep\.io \(read back\)/,
    );

    const read = async () => {
      const config: any = ok(await e2e.admin.get("mutatingwebhookconfigurations", null, NAME), "get the configuration");
      const secret: any = ok(await e2e.admin.get("secrets", e2e.namespace, "claimstep-webhook-tls"), "get the secret");
      const ca = new X509Certificate(Buffer.from(config.webhooks[0].clientConfig.caBundle, "base64"));
      const cert = new X509Certificate(Buffer.from(secret.data["tls.crt"], "base64"));
      return { config, secret, ca, cert };
    };
    const a = await read();
    expect(a.secret.type).toBe("kubernetes.io/tls");
    expect(new Set(a.config.webhooks.map((w: any) => w.clientConfig.caBundle)).size).toBe(1);
    expect(a.cert.verify(a.ca.publicKey)).toBe(true);
    expect(a.cert.checkHost(`claimstep-webhook.${e2e.namespace}.svc`)).toBe(`claimstep-webhook.${e2e.namespace}.svc`);
    expect(Buffer.from(a.secret.data["ca.crt"], "base64").toString()).toBe(
      Buffer.from(a.config.webhooks[0].clientConfig.caBundle, "base64").toString(),
    );
    // Everything else of the configuration is as shipped.
    expect(a.config.webhooks.map((w: any) => [w.name, w.failurePolicy, w.matchConditions[0].expression])).toEqual([
      ["statefulsets.admission.claimstep.io", "Fail", CHANGED],
      ["namespaces.admission.claimstep.io", "Fail", CHANGED],
    ]);

    const second = await run();
    expect(second.code, second.stderr).toBe(0);
    const b = await read();
    expect(b.ca.fingerprint256).not.toBe(a.ca.fingerprint256);
    expect(b.cert.verify(b.ca.publicKey)).toBe(true);
    expect(b.cert.verify(a.ca.publicKey)).toBe(false);
  });

  it("as claimstep's own ServiceAccount (no such rights): a clear refusal naming what it needs, exit 1", async () => {
    const r = await runClaimstep(
      ["admission", "certs", "-n", e2e.namespace, "--kubeconfig", e2e.info.claimstepKubeconfig, "--no-color"],
      { KUBECONFIG: e2e.info.claimstepKubeconfig },
      60_000,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /run it as a cluster admin \(it patches secrets in .* and mutatingwebhookconfigurations\)/,
    );
  });
});
