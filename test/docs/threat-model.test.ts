// docs/deploying.md's threat model (issue 37, Proof) held to the code and the manifests:
// - its routes table names every route the HTTP app serves (Hono's app.routes, with the status page
//   and both forge webhooks mounted) and nothing else, plus the Node server's GET /metrics and the
//   Worker's per-cluster routes, each answered through its real entry point (instrumentFetch,
//   fleetFetch) in process;
// - each row's credential holds: a bearer row is 401 without a token, a signature row is 401
//   unsigned, a viewer row does not serve its page without a session, a `none` row answers;
// - its identities table is what the RBAC manifests grant each ServiceAccount, exactly, and its
//   "never" column holds against them.
// No network (the Kubernetes client points at an address never reached: every request here is
// refused, or answered, before claimstep reads the cluster), no processes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { KubeClient } from "../../adapters/kube/client.js";
import { PromRecorder } from "../../adapters/metrics-node/registry.js";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { fleetFetch } from "../../functions/fleet/entry.js";
import { instrumentFetch } from "../../functions/metrics.js";
import { wire } from "../../functions/wiring.js";
import { ROOT } from "../support/spawn-cli.js";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOC = read("docs/deploying.md");

/** A Markdown section: from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: RegExp): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && heading.test(l));
  if (start < 0) throw new Error(`no section ${heading}`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}} `).test(l));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** The first table of a section: its rows (header and separator dropped), cells trimmed. */
function table(text: string): string[][] {
  const rows = text.split("\n").filter((l) => l.startsWith("|"));
  // Cells split on unescaped pipes (none of the cells holds one).
  return rows.slice(2).map((r) =>
    r
      .slice(1, -1)
      .split("|")
      .map((c) => c.trim()),
  );
}

const THREAT = section(DOC, /^## Threat model: who can reach what$/);
const ROUTES = table(section(THREAT, /^### Routes$/));
const IDENTITIES = table(section(THREAT, /^### Identities$/));

const METHOD = /`(GET|HEAD|POST|PUT|PATCH|DELETE) (\/[^`\s]*)`/g;
/** A row's routes: every `METHOD /path` code span of its first cell. */
const routesOf = (cell: string) => [...cell.matchAll(METHOD)].map((m) => `${m[1]} ${m[2]}`);
const RUNTIME_ONLY = /\((Node server|Worker[^)]*)\)/;

// ---- the apps ----

const API_TOKEN = "api-token-0123456789abcdef";
const VIEWER_TOKEN = "viewer-token-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const SECRET = `whsec_${btoa("threat-model-secret-0123456789")}`;
const KUBE = "https://kube.invalid:6443";
const ENV = {
  CLAIMSTEP_API_TOKEN: API_TOKEN,
  CLAIMSTEP_VIEWER_TOKEN: VIEWER_TOKEN,
  CLAIMSTEP_WEBHOOK_SECRET: SECRET,
  CLAIMSTEP_GITHUB_WEBHOOK_SECRET: "github-secret-0123456789abcdef",
  CLAIMSTEP_GITLAB_WEBHOOK_TOKEN: "gitlab-token-0123456789abcdef",
  CLAIMSTEP_NAMESPACES: "default",
};

/** The app as wire() builds it for the Worker and the Node server: every optional route on. */
function fullApp() {
  const config = configFromEnv(ENV);
  const client = new KubeClient({ server: KUBE, retry: { attempts: 1 } });
  const { deps } = wire({ client, config, now: () => new Date(), replay: new RecentIds() });
  return createApp(deps);
}

/** Hono's routes as `METHOD /path`: handlers only (ALL: `use` middleware and the 405/404 catchers). */
function servedRoutes(app: ReturnType<typeof createApp>): Set<string> {
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    // An optional literal segment (`/:scope{by-namespace}?`) is two paths.
    const optional = /\/:[a-z]+\{([a-z-]+)\}\?$/i.exec(r.path);
    if (optional) {
      const bare = r.path.slice(0, optional.index);
      out.add(`${r.method} ${bare}`);
      out.add(`${r.method} ${bare}/${optional[1]}`);
    } else out.add(`${r.method} ${r.path}`);
  }
  return out;
}

/** A concrete URL path for a route pattern. */
const concrete = (path: string) =>
  path.replace(":cluster", "beta").replace(":namespace", "default").replace(":name", "web").replace(/\*$/, "x");

const fleetEnv = () => ({
  ...ENV,
  KUBE_API_SERVER: KUBE,
  KUBE_TOKEN: "kube-token-0123456789abcdef",
  CLAIMSTEP_DEFAULT_CLUSTER: "alpha",
  CLAIMSTEP_CLUSTERS: JSON.stringify([{ name: "beta", server: KUBE, tokenSecret: "KUBE_TOKEN_BETA" }]),
  KUBE_TOKEN_BETA: "kube-token-beta-0123456789",
});

/** One request without any credential, through the entry point that serves the row's route. */
async function unauthenticated(route: string, row: string[]): Promise<Response> {
  const [method, path] = route.split(" ") as [string, string];
  const init: RequestInit = {
    method,
    ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
  };
  const runtime = RUNTIME_ONLY.exec(row[0]!)?.[1];
  const url = `https://claimstep.example${concrete(path)}`;
  if (runtime === "Node server") {
    const fetch = instrumentFetch(fullApp().fetch, new PromRecorder({ defaultMetrics: false }), [
      API_TOKEN,
      METRICS_TOKEN,
    ]);
    return fetch(new Request(url, init));
  }
  if (runtime?.startsWith("Worker")) return fleetFetch(new Request(url, init), fleetEnv(), {});
  return fullApp().request(concrete(path), init);
}

describe("docs/deploying.md's threat model: routes", () => {
  it("has a row for each route, each naming at least one", () => {
    expect(ROUTES.length).toBeGreaterThan(10);
    for (const row of ROUTES) expect(routesOf(row[0]!), row[0]).not.toEqual([]);
  });

  it("names every route the HTTP app serves, and no other", () => {
    const shared = ROUTES.filter((r) => !RUNTIME_ONLY.test(r[0]!)).flatMap((r) => routesOf(r[0]!));
    expect(new Set(shared).size).toBe(shared.length);
    expect([...new Set(shared)].sort()).toEqual([...servedRoutes(fullApp())].sort());
  });

  it("names the runtime-only routes their entry points serve", () => {
    const only = ROUTES.filter((r) => RUNTIME_ONLY.test(r[0]!)).flatMap((r) => routesOf(r[0]!));
    // GET /metrics: instrumentFetch (functions/metrics.ts); the Worker's per-cluster routes:
    // fleetFetch's CLUSTER_ROUTE, STATE_ROUTE and UI_ROUTE (functions/fleet/entry.ts).
    expect(only.sort()).toEqual(
      [
        "GET /metrics",
        "GET /v1/clusters/:cluster/statefulsets/:namespace/:name/state",
        "POST /v1/clusters/:cluster/steps",
        "GET /ui/clusters/:cluster",
      ].sort(),
    );
    const entry = read("functions/fleet/entry.ts");
    for (const re of [
      "CLUSTER_ROUTE = /^\\/v1\\/clusters\\/",
      "UI_ROUTE = /^\\/ui\\/clusters\\/",
      "STATE_ROUTE = /^\\/statefulsets\\/",
    ])
      expect(entry).toContain(re);
    expect(read("functions/metrics.ts")).toContain('path === "/metrics"');
  });

  const cases = ROUTES.flatMap((row) => routesOf(row[0]!).map((route) => [route, row] as const));
  it.each(cases)("%s: its credential column holds", async (route, row) => {
    const credential = row[1]!;
    const res = await unauthenticated(route, row);
    const status = res.status;
    const body = await res.text();
    if (/^bearer\b/.test(credential)) {
      expect(status, body).toBe(401);
    } else if (/^Standard Webhooks signature/.test(credential)) {
      expect(status, body).toBe(401);
      // A bearer token is not enough.
      const init = {
        method: "POST",
        headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
        body: "{}",
      };
      expect((await fullApp().request(concrete(route.split(" ")[1]!), init)).status).toBe(403);
    } else if (/^GitHub HMAC/.test(credential)) {
      expect(status, body).toBe(401);
      expect(body).toContain("X-Hub-Signature-256");
    } else if (/^GitLab token/.test(credential)) {
      expect(status, body).toBe(401);
      expect(body).toContain("X-Gitlab-Token");
    } else if (/^viewer token \+ session cookie/.test(credential)) {
      // The login form (or, for the live parts, its reason) instead of the page.
      expect(status, body).toBe(401);
      expect(body).toMatch(/name="token"|Sign in with a viewer token/);
    } else if (/^none\b/.test(credential)) {
      // Asks for no credential (POST /ui/login answers its own form again, 401, for an empty token).
      expect(res.headers.get("www-authenticate"), body).toBeNull();
      expect(body).not.toContain('"error":"Unauthorized"');
      if (route.startsWith("GET ")) expect(status, body).toBe(200);
    } else throw new Error(`${route}: unknown credential ${credential}`);
  });

  it("says what the server's limits say: the shared routes and the deadline", async () => {
    const { SHARED_ROUTES, SERVER_LIMITS } = await import("../../functions/server.js");
    const { BODY_DEADLINE_MS } = await import("../../functions/http/body.js");
    const { ADMISSION_BODY_LIMIT, ADMISSION_MAX_IN_FLIGHT } = await import("../../functions/routes/admission.js");
    const withShare = ROUTES.filter((r) => /routeConnections/.test(r[3]!) || r[3] === "as GitHub's").flatMap((r) =>
      routesOf(r[0]!).map((x) => x.split(" ")[1]!),
    );
    expect(withShare.filter((p) => !p.endsWith("/by-namespace")).sort()).toEqual([...SHARED_ROUTES].sort());
    expect(THREAT).toContain(`\`SERVER_LIMITS.routeConnections\` (${SERVER_LIMITS.routeConnections})`);
    expect(THREAT).toContain(`\`BODY_DEADLINE_MS\` (${BODY_DEADLINE_MS / 1000} s`);
    expect(THREAT).toContain(`\`ADMISSION_BODY_LIMIT\` (${ADMISSION_BODY_LIMIT / 1024 / 1024} MiB)`);
    expect(THREAT).toContain(`${ADMISSION_MAX_IN_FLIGHT} in flight`);
  });
});

// ---- the identities ----

type Doc = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: any };
const MANIFESTS = [
  "rbac.yaml",
  "rbac-finalize.yaml",
  "relay.yaml",
  "admission.yaml",
  "cronjob.yaml",
  "deployment.yaml",
];
const docsOf = (file: string): Doc[] =>
  YAML.parseAllDocuments(read(`deploy/kubernetes/${file}`))
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

/** resource key → verbs: `name[.group][/resourceName][ in ns]`, as the table writes them. */
type Grants = Map<string, Set<string>>;

/** What the bindings of `files` grant the ServiceAccount `ns/name`. */
function granted(files: readonly string[], sa: string): Grants {
  const all = files.flatMap(docsOf);
  const out: Grants = new Map();
  for (const b of all.filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding")) {
    const subjects = (b.subjects ?? []) as Array<{ kind: string; name: string; namespace?: string }>;
    if (!subjects.some((s) => s.kind === "ServiceAccount" && `${s.namespace}/${s.name}` === sa)) continue;
    const role = all.find(
      (d) =>
        d.kind === b.roleRef.kind &&
        d.metadata.name === b.roleRef.name &&
        (d.kind === "ClusterRole" || d.metadata.namespace === b.metadata.namespace),
    );
    if (!role)
      throw new Error(`${b.kind} ${b.metadata.name}: no ${b.roleRef.kind} ${b.roleRef.name} in ${files.join(", ")}`);
    const scope = b.kind === "RoleBinding" ? ` in ${b.metadata.namespace}` : "";
    for (const rule of role.rules as Array<{
      apiGroups: string[];
      resources: string[];
      verbs: string[];
      resourceNames?: string[];
    }>) {
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const name of rule.resourceNames ?? [undefined]) {
            const key = `${resource.replace(/^([^/]+)/, (r) => (group ? `${r}.${group}` : r))}${name ? `/${name}` : ""}${scope}`;
            const verbs = out.get(key) ?? new Set<string>();
            for (const v of rule.verbs) verbs.add(v);
            out.set(key, verbs);
          }
    }
  }
  return out;
}

/** The table's grants cell: `` `key` (in ns): verb, verb · … ``. */
function parseGrants(cell: string): Grants {
  const out: Grants = new Map();
  for (const item of cell.split(" · ")) {
    const m = /^`([^`]+)`(?: \(in `([^`]+)`\))?: (.+)$/.exec(item.trim());
    if (!m) throw new Error(`cannot read the grant ${JSON.stringify(item)}`);
    const key = `${m[1]}${m[2] ? ` in ${m[2]}` : ""}`;
    out.set(key, new Set(m[3]!.split(", ").map((v) => v.trim())));
  }
  return out;
}

const plain = (g: Grants) =>
  Object.fromEntries([...g].map(([k, v]) => [k, [...v].sort()]).sort(([a], [b]) => String(a).localeCompare(String(b))));

const saOf = (row: string[]) => /^`([^`]+)`/.exec(row[0]!)![1]!;
const filesOf = (cell: string) => [...cell.matchAll(/\b([a-z-]+\.yaml)\b/g)].map((m) => m[1]!);

describe("docs/deploying.md's threat model: identities", () => {
  it("has a row per binding file of each ServiceAccount the manifests declare", () => {
    const declared = MANIFESTS.flatMap(docsOf)
      .filter((d) => d.kind === "ServiceAccount")
      .map((d) => `${d.metadata.namespace}/${d.metadata.name}`);
    expect([...new Set(IDENTITIES.map(saOf))].sort()).toEqual([...new Set(declared)].sort());
    // Every binding of a manifest to one of them is covered by a row naming its file.
    for (const file of MANIFESTS)
      for (const sa of declared)
        if (granted([file], sa).size)
          expect(
            IDENTITIES.some((r) => saOf(r) === sa && filesOf(r[2]!)[0] === file),
            `${sa} bound in ${file}`,
          ).toBe(true);
  });

  it.each(IDENTITIES.map((r) => [`${saOf(r)} (${filesOf(r[2]!)[0]})`, r] as const))(
    "%s: grants what the table says, exactly",
    (_, row) => {
      const file = filesOf(row[2]!)[0]!;
      expect(plain(parseGrants(row[3]!))).toEqual(plain(granted([file], saOf(row))));
    },
  );

  it.each(IDENTITIES.map((r) => [`${saOf(r)} (${filesOf(r[2]!)[0]})`, r] as const))(
    "%s: runs the workloads the table says",
    (_, row) => {
      const [namespace, name] = saOf(row).split("/");
      const runs = MANIFESTS.filter((f) =>
        docsOf(f).some(
          (d) =>
            d.metadata.namespace === namespace &&
            JSON.stringify(d.spec ?? {}).includes(`"serviceAccountName":"${name}"`),
        ),
      );
      const said =
        row[1] === "the same" ? filesOf(IDENTITIES.find((r) => saOf(r) === saOf(row))![1]!) : filesOf(row[1]!);
      expect(said.sort()).toEqual(runs.sort());
    },
  );

  it.each(IDENTITIES.map((r) => [`${saOf(r)} (${filesOf(r[2]!)[0]})`, r] as const))(
    "%s: is never granted what the table says it never is (with every optional file applied too)",
    (_, row) => {
      const all = granted(MANIFESTS, saOf(row));
      for (const item of row[4]!.split(" · ")) {
        const m = /^([a-z]+) `([^`]+)`$/.exec(item.trim());
        if (!m) throw new Error(`cannot read ${JSON.stringify(item)}`);
        const [, verb, resource] = m;
        // This row's file for what the optional file adds (delete statefulsets); every file for the rest.
        const own = granted([filesOf(row[2]!)[0]!], saOf(row));
        const within = [...own].some(
          ([k, v]) => k.split("/")[0]!.split(" ")[0] === resource && (v.has(verb!) || v.has("*")),
        );
        expect(within, `${saOf(row)} may ${verb} ${resource}`).toBe(false);
        if (resource === "persistentvolumeclaims" || resource === "secrets" || resource === "pods")
          expect(
            [...all].some(([k, v]) => k.split(" ")[0] === resource && v.has(verb!)),
            `${verb} ${resource}`,
          ).toBe(false);
      }
    },
  );

  it("no manifest grants anyone a wildcard, a Secret, or delete on claims; only rbac-finalize.yaml deletes sets", () => {
    const rules = MANIFESTS.flatMap((f) =>
      docsOf(f)
        .filter((d) => d.kind === "ClusterRole" || d.kind === "Role")
        .flatMap((d) => (d.rules as Array<{ resources: string[]; verbs: string[] }>).map((r) => ({ f, ...r }))),
    );
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) {
      expect(r.verbs).not.toContain("*");
      expect(r.resources).not.toContain("*");
      expect(r.resources).not.toContain("secrets");
      if (r.resources.includes("persistentvolumeclaims"))
        expect(r.verbs.filter((v) => v === "delete" || v === "deletecollection")).toEqual([]);
      if (r.resources.includes("statefulsets") && r.verbs.includes("delete")) expect(r.f).toBe("rbac-finalize.yaml");
    }
    // And rbac-finalize.yaml is not applied by default.
    const kustomization = YAML.parse(read("deploy/kubernetes/kustomization.yaml")) as { resources: string[] };
    expect(kustomization.resources).not.toContain("rbac-finalize.yaml");
  });
});
