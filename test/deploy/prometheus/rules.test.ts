// claimstep's alerts (deploy/prometheus/claimstep.rules.yml): Prometheus' own promtool checks
// them and runs their unit tests (claimstep.rules.test.yml: every alert fires on the series that
// should fire it, not on a healthy rollout beside it); the PrometheusRule for the Prometheus
// Operator carries the same groups; every alert has its runbook paragraph in docs/operating.md.
// CI installs Debian's prometheus package (it brings promtool); without promtool the two promtool
// tests are skipped, saying so.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";

const ROOT = new URL("../../..", import.meta.url).pathname;
const RULES = join(ROOT, "deploy/prometheus/claimstep.rules.yml");
const RULE_TESTS = join(ROOT, "test/deploy/prometheus/claimstep.rules.test.yml");
const OPERATOR = join(ROOT, "deploy/kubernetes/monitoring");
const PROMTOOL = process.env.CLAIMSTEP_PROMTOOL ?? "/usr/bin/promtool";
const hasPromtool = existsSync(PROMTOOL);
if (!hasPromtool)
  console.warn(
    `promtool not found at ${PROMTOOL} (apt-get install prometheus, or set CLAIMSTEP_PROMTOOL): the promtool tests of the alert rules are skipped`,
  );

const run = promisify(execFile);
const promtool = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd: ROOT, timeout: 20_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
};

const rules = () =>
  parse(readFileSync(RULES, "utf8")) as {
    groups: { name: string; rules: { alert?: string; expr: string; for?: string }[] }[];
  };
const alerts = () => rules().groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));

describe("alert rules", () => {
  it("are the six of issue 25", () => {
    expect(alerts()).toEqual([
      "ClaimstepRolloutBlocked",
      "ClaimstepRolloutNoProgress",
      "ClaimstepPermissionErrors",
      "ClaimstepAPIServerUnreachable",
      "ClaimstepNoSweeper",
      "ClaimstepVolumeFullWithoutAutogrow",
    ]);
  });

  it.skipIf(!hasPromtool)("pass promtool check rules", async () => {
    const r = await promtool("check", "rules", RULES);
    expect(r.out).toMatch(/SUCCESS: 6 rules found/);
    expect(r.code, r.out).toBe(0);
  });

  it.skipIf(!hasPromtool)("pass their promtool unit tests, which test every alert firing", async () => {
    const tested = new Set(
      (
        parse(readFileSync(RULE_TESTS, "utf8")) as {
          tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
        }
      ).tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    expect([...tested].sort()).toEqual([...alerts()].sort());
    const r = await promtool("test", "rules", RULE_TESTS);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS/);
  });

  it("are the PrometheusRule's groups, exactly (deploy/kubernetes/monitoring/prometheusrule.yaml)", () => {
    const [rule] = parseAllDocuments(readFileSync(join(OPERATOR, "prometheusrule.yaml"), "utf8")).map((d) => d.toJS());
    expect(rule).toMatchObject({
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { name: "claimstep", namespace: "claimstep" },
    });
    expect(
      rule.spec.groups,
      "prometheusrule.yaml's spec.groups differ from deploy/prometheus/claimstep.rules.yml's groups: copy them over",
    ).toEqual(rules().groups);
  });

  it("each have a runbook paragraph in docs/operating.md's Alerts section, which their runbook_url names", () => {
    const doc = readFileSync(join(ROOT, "docs/operating.md"), "utf8");
    const section = doc.slice(doc.indexOf("\n## Alerts"));
    expect(doc).toContain("\n## Alerts");
    for (const g of rules().groups)
      for (const r of g.rules as { alert?: string; annotations?: Record<string, string> }[]) {
        if (!r.alert) continue;
        expect(section, r.alert).toMatch(new RegExp(`\\n#### ${r.alert}\\n\\n\\S`));
        expect(r.annotations?.runbook_url).toBe(
          `https://github.com/claimstep/claimstep/blob/main/docs/operating.md#${r.alert.toLowerCase()}`,
        );
      }
  });

  it("the ServiceMonitor scrapes the server's Service (its port http, /metrics), with the token the server reads and honorLabels", () => {
    const [monitor] = parseAllDocuments(readFileSync(join(OPERATOR, "servicemonitor.yaml"), "utf8")).map((d) =>
      d.toJS(),
    );
    const deployment = parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes/deployment.yaml"), "utf8")).map(
      (d) => d.toJS(),
    );
    const services = deployment.filter((o) => o.kind === "Service");
    const selected = services.filter(
      (svc) =>
        svc.metadata.namespace === monitor.metadata.namespace &&
        monitor.spec.namespaceSelector.matchNames.includes(svc.metadata.namespace) &&
        Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => svc.metadata.labels?.[k] === v),
    );
    expect(selected.map((svc) => svc.metadata.name)).toEqual(["claimstep"]);
    const [endpoint] = monitor.spec.endpoints;
    expect(selected[0].spec.ports.map((p: { name: string }) => p.name)).toContain(endpoint.port);
    expect(endpoint).toMatchObject({
      path: "/metrics",
      honorLabels: true,
      authorization: { type: "Bearer", credentials: { name: "claimstep" } },
    });
    // The key is a variable the server reads for /metrics, from the secret the Deployment mounts.
    const server = deployment.find((o) => o.kind === "Deployment").spec.template.spec.containers[0];
    expect(server.envFrom).toContainEqual({ secretRef: { name: endpoint.authorization.credentials.name } });
    expect(readFileSync(join(ROOT, "functions/metrics.ts"), "utf8")).toContain(endpoint.authorization.credentials.key);
  });

  it("are opt-in: the monitoring kustomization is not in the default one", () => {
    const main = parse(readFileSync(join(ROOT, "deploy/kubernetes/kustomization.yaml"), "utf8"));
    expect(JSON.stringify(main.resources)).not.toMatch(/monitoring/);
    const k = parse(readFileSync(join(OPERATOR, "kustomization.yaml"), "utf8"));
    expect(k.resources.sort()).toEqual(["prometheusrule.yaml", "servicemonitor.yaml"]);
    for (const f of k.resources) expect(existsSync(join(OPERATOR, f)), f).toBe(true);
  });
});
