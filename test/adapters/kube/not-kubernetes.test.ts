// Issue 39 point 4: a server URL that is not a Kubernetes API server (a web server's empty 404, a
// proxy's HTML page) is said to be one, never read as "StatefulSet … not found"; a real API
// server's 404 (a Status body, as captured) and its plain 404 for a group/version it does not serve
// still read as NotFound; the simulated cluster answers 404 with the same Status as the real one.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { KubeClient } from "../../../adapters/kube/client.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { Routes } from "../../../adapters/kube/routes.js";
import { StatefulSet, VolumeAttributesClass } from "../../../core/kube/k8s.js";
import { clusterClient } from "../../../functions/fleet/context.js";
import { problemOf } from "../../../functions/http/problem.js";
import { fixture } from "../../fixtures/apiserver.js";
import { createSimServer } from "../../support/index.js";

const BASE = "https://not-kube.test";
const ref = { namespace: "nc-db", name: "web" };

/** A server answering every request with this 404. */
const answering = (body: string, type = "text/plain") =>
  new KubeClient({
    server: BASE,
    fetch: async () => new Response(body, { status: 404, headers: body ? { "content-type": type } : {} }),
    sleep: async () => {},
  });

const caught = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
};

describe("a 404 without a Kubernetes Status body", () => {
  it.each([
    ["an empty body", ""],
    ["an HTML page", "<!DOCTYPE html><html><body>Not Found</body></html>"],
    ["a JSON body that is not a Status", '{"error":"not found"}'],
    ["Go's plain 404, where the group/version is always served", "404 page not found\n"],
  ])("%s: NotKubernetes, naming the server, the request and where the URL came from", async (what, body) => {
    const err = await caught(new KubeReader(answering(body)).load(ref));
    expect(err.kind).toBe("NotKubernetes");
    expect(err.code).toBe(404);
    expect(err.message).toContain(
      `${BASE} answered 404 without a Kubernetes Status body for GET /apis/apps/v1/namespaces/nc-db/statefulsets/web (${what === "an empty body" ? "an empty body" : what === "an HTML page" ? "an HTML page" : ""}`,
    );
    expect(err.message).toMatch(/is this a Kubernetes API server\? Check KUBE_API_SERVER$/);
    expect(err.message).not.toMatch(/not found \(/);
  });

  it("names the kubeconfig when the URL came from one", async () => {
    const c = new KubeClient({
      server: BASE,
      serverOrigin: "the kubeconfig's cluster server (kubectl config view --minify)",
      fetch: async () => new Response(null, { status: 404 }),
    });
    const err = await caught(c.get(Routes.getStatefulSet, ref, StatefulSet));
    expect(err.message).toMatch(/Check the kubeconfig's cluster server \(kubectl config view --minify\)$/);
  });

  it("on the Worker (a fleet cluster's client, the app's answer): 502 UpstreamError naming the cluster to check", async () => {
    const c = clusterClient(
      {},
      { name: "us-1", server: BASE, token: "t0ken", namespaces: [] },
      async () => new Response(null, { status: 404 }),
    );
    const err = await caught(new KubeReader(c).load(ref));
    expect(err.kind).toBe("NotKubernetes");
    expect(err.message).toMatch(/Check the server of cluster "us-1" \(CLAIMSTEP_CLUSTERS, or KUBE_API_SERVER/);
    const problem = problemOf(err, () => {});
    expect(problem.status).toBe(502);
    expect(problem.body).toMatchObject({ error: "UpstreamError", message: err.message, upstream: { code: 404 } });
  });

  it("a real API server's 404 (the captured Status) is still the set's NotFound", async () => {
    const { body, code } = fixture("v1.34/get-missing-set-2");
    expect(code).toBe(404);
    const c = new KubeClient({
      server: BASE,
      fetch: async () =>
        new Response(JSON.stringify(body), { status: 404, headers: { "content-type": "application/json" } }),
    });
    const err = await caught(new KubeReader(c).load(ref));
    expect(err.kind).toBe("NotFound");
    expect(err.message).toMatch(/^StatefulSet nc-db\/web not found/);
  });

  it("Go's plain 404 on a group/version the server may not serve (VolumeAttributesClass) is a NotFound", async () => {
    const err = await caught(
      answering("404 page not found\n").list(Routes.listVolumeAttributesClassesBeta, {}, VolumeAttributesClass),
    );
    expect(err.kind).toBe("NotFound");
    // …but an empty one there is not an API server's either.
    expect((await caught(answering("").list(Routes.listVolumeAttributesClasses, {}, VolumeAttributesClass))).kind).toBe(
      "NotKubernetes",
    );
  });
});

describe("the simulated cluster's 404", () => {
  const keysOf = (o: Record<string, unknown>) => Object.keys(o).sort();

  it("is a Status shaped as the real one (fixtures/apiserver/v1.34/get-missing-set-2.txt)", async () => {
    const real = fixture("v1.34/get-missing-set-2").body;
    const sim = createSimServer({ baseUrl: BASE });
    const res = await sim.http.fetch(new Request(`${BASE}/apis/apps/v1/namespaces/fx/statefulsets/missing`));
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(keysOf(body)).toEqual(keysOf(real));
    expect(body).toEqual(real);
  });

  it("answers a path it does not serve with a Status too", async () => {
    const sim = createSimServer({ baseUrl: BASE });
    const res = await sim.http.fetch(new Request(`${BASE}/apis/example.com/v1/things`));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });
});
