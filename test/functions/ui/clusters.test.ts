// The status page with several clusters (HTTP, no browser): the Worker's fleet entry
// (functions/fleet/entry.ts) in front of two simulated clusters on real sockets — alpha, the
// default one (KUBE_API_SERVER), and beta (CLAIMSTEP_CLUSTERS). Each cluster's list and set pages
// read that cluster; /ui stays alpha's; an unknown cluster is a 404 page naming the configured ones.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleetFetch } from "../../../functions/fleet/entry.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../../support/index.js";
import { HOSTILE, VIEWER_TOKEN, viewer } from "./harness.js";

const TOKENS = { alpha: "kube-token-alpha-0123456789", beta: "kube-token-beta-0123456789" };
const PROD_VIEWER = "prod-viewer-0123456789abcdef";
const desired = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];

let alpha: SocketSim;
let beta: SocketSim;
let env: Record<string, unknown>;

beforeAll(async () => {
  alpha = await serveSim({ token: TOKENS.alpha });
  alpha.fake.seed(...storageClassObjects(), ...statefulSetObjects({ desired }));
  beta = await serveSim({ token: TOKENS.beta });
  beta.fake.seed(...storageClassObjects(), ...statefulSetObjects({ name: "db", namespace: "prod", desired }));
  env = {
    KUBE_API_SERVER: alpha.url,
    KUBE_TOKEN: TOKENS.alpha,
    CLAIMSTEP_DEFAULT_CLUSTER: "alpha",
    CLAIMSTEP_CLUSTERS: JSON.stringify([{ name: "beta", server: beta.url, tokenSecret: "KUBE_TOKEN_BETA" }]),
    KUBE_TOKEN_BETA: TOKENS.beta,
    CLAIMSTEP_API_TOKEN: "api-token-0123456789abcdef",
    CLAIMSTEP_VIEWER_TOKEN: `${VIEWER_TOKEN} prod:${PROD_VIEWER}`,
  };
});

afterAll(async () => {
  await alpha?.close();
  await beta?.close();
});

const get = async (path: string, headers: Record<string, string> = viewer()) => {
  const res = await fleetFetch(new Request(`https://claimstep.example${path}`, { headers }), env, {});
  return { status: res.status, headers: res.headers, text: await res.text() };
};
const reads = (sim: SocketSim) => sim.fake.http.counters().total;

describe("the status page with two clusters", () => {
  it("/ui is the default cluster's list, says so, and links every cluster's list", async () => {
    const { status, text } = await get("/ui");
    expect(status).toBe(200);
    expect(text).toContain('data-set="default/web"');
    expect(text).not.toContain('data-set="prod/db"');
    expect(text).toContain('<span data-cluster="true"> · cluster alpha</span>');
    expect(text).toMatch(
      /<nav aria-label="Clusters" data-clusters="true">Clusters: <a href="\/ui\/clusters\/alpha" aria-current="page">alpha<\/a> <a href="\/ui\/clusters\/beta">beta<\/a><\/nav>/,
    );
    expect(text).toContain('<a href="/ui/default/web">web</a>');
  });

  it("/ui/clusters/:cluster lists that cluster's sets, linking its set pages", async () => {
    const before = reads(alpha);
    const { status, text } = await get("/ui/clusters/beta");
    expect(status).toBe(200);
    expect(text).toContain('data-set="prod/db"');
    expect(text).not.toContain('data-set="default/web"');
    expect(text).toContain('<a href="/ui/clusters/beta/prod/db">db</a>');
    expect(text).toContain("cluster beta</span>");
    expect(text).toContain('<a href="/ui/clusters/beta" aria-current="page">beta</a>');
    expect(reads(alpha)).toBe(before); // beta's page reads beta only
    // The default cluster by its name: the same as /ui.
    const named = await get("/ui/clusters/alpha");
    expect(named.status).toBe(200);
    expect(named.text).toContain('data-set="default/web"');
  });

  it("a set's page, fragment and stream read the set's cluster, and point at that cluster's routes", async () => {
    const page = await get("/ui/clusters/beta/prod/db");
    expect(page.status).toBe(200);
    expect(page.text).toContain('data-poll="/ui/clusters/beta/prod/db/fragment"');
    expect(page.text).toContain('data-stream="/ui/clusters/beta/prod/db/stream"');
    expect(page.text).toContain("cluster beta</span>");
    expect(page.text).toContain('<a href="/ui/clusters/beta">All sets</a>');
    expect(beta.fake.http.requests().some((r) => r.resource === "statefulsets" && r.name === "db")).toBe(true);
    // The same set is not on alpha, and alpha's set is not on beta.
    expect((await get("/ui/default/db")).status).toBe(404);
    expect((await get("/ui/clusters/beta/default/web")).text).toContain("StatefulSet default/web not found");
    expect((await get("/ui/clusters/alpha/default/web")).status).toBe(200);
    const fragment = await get("/ui/clusters/beta/prod/db/fragment");
    expect(fragment.status).toBe(200);
    expect(fragment.text).toMatch(/^<div data-headline=/);
    const stream = await fleetFetch(
      new Request("https://claimstep.example/ui/clusters/beta/prod/db/stream", { headers: viewer() }),
      env,
      {},
    );
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: view");
    await reader.cancel();
  });

  it("signing in and the CSP are the same on every cluster's pages; a namespaced viewer token applies on each", async () => {
    const anonymous = await get("/ui/clusters/beta/prod/db", {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toContain('name="next" value="/ui/clusters/beta/prod/db"');
    expect(anonymous.text).not.toContain("data-clusters"); // no cluster names before signing in
    expect(anonymous.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect((await get("/ui/clusters/beta")).headers.get("content-security-policy")).toBe(
      (await get("/ui")).headers.get("content-security-policy"),
    );
    expect((await get("/ui/clusters/beta/prod/db", viewer(PROD_VIEWER))).status).toBe(200);
    expect((await get("/ui/clusters/alpha/default/web", viewer(PROD_VIEWER))).status).toBe(403);
    expect((await get("/ui", viewer(PROD_VIEWER))).text).not.toContain('data-set="default/web"');
  });

  it("an unknown cluster is a 404 page naming the configured ones; a hostile name is text", async () => {
    const mars = await get("/ui/clusters/mars");
    expect(mars.status).toBe(404);
    expect(mars.text).toContain("The cluster mars is not configured here (configured: alpha, beta).");
    expect(mars.text).toContain('<a href="/ui/clusters/beta">beta</a>');
    expect((await get("/ui/clusters/mars/default/web")).status).toBe(404);
    expect((await get("/ui/clusters/mars", {})).status).toBe(401);

    const hostile = await get(`/ui/clusters/${encodeURIComponent(HOSTILE)}/default/web`);
    expect(hostile.status).toBe(404);
    expect(hostile.text).not.toMatch(/<img src=x/);
    expect(hostile.text).not.toMatch(/<script>window/);
    expect(hostile.text).toContain("&lt;img src=x onerror=");
    expect(hostile.headers.get("content-security-policy")).toContain("default-src 'none'");
  });
});
