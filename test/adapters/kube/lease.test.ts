// The sweeper's Lease through the direct adapter (adapters/kube/lease.ts) on the simulated API
// server, which serves leases.coordination.k8s.io as the real one does (lease-create-*.txt).
import { describe, expect, it } from "vitest";
import { KubeLease } from "../../../adapters/kube/lease.js";
import { SimCluster } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { fixtureStatus } from "../../fixtures/apiserver.js";

const spec = (holder: string) => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: "2026-11-30T10:00:00.000000Z",
  renewTime: "2026-11-30T10:00:00.000000Z",
  leaseTransitions: 0,
});

const post = (sim: SimCluster, body: unknown) =>
  sim.http.fetchLike(`${SIM_SERVER}/apis/coordination.k8s.io/v1/namespaces/default/leases`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "User-Agent": "curl/8.5.0" },
    body: JSON.stringify(body),
  });

describe("the simulated API server serves Leases like the real one", () => {
  it("creates with lease-create-1.txt's answer (201) and refuses the second with lease-create-2.txt's (409 AlreadyExists)", async () => {
    const sim = new SimCluster();
    const body = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "claimstep-web" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 30 },
    };
    const first = await post(sim, body);
    const want1 = fixtureStatus("lease-create-1.txt");
    expect(first.status).toBe(want1.code);
    const got = (await first.json()) as any;
    const { uid: _u, resourceVersion: _r, creationTimestamp: _c, managedFields, ...meta } = got.metadata;
    const {
      uid: _wu,
      resourceVersion: _wr,
      creationTimestamp: _wc,
      managedFields: wantFields,
      ...wantMeta
    } = want1.body.metadata;
    expect({ ...got, metadata: meta }).toEqual({ ...want1.body, metadata: wantMeta });
    expect(managedFields.map(({ time: _t, ...f }: any) => f)).toEqual(wantFields.map(({ time: _t, ...f }: any) => f));

    const second = await post(sim, { ...body, spec: { holderIdentity: "b", leaseDurationSeconds: 30 } });
    const want2 = fixtureStatus("lease-create-2.txt");
    expect(second.status).toBe(want2.code);
    expect(await second.json()).toEqual(want2.body);
  });
});

describe("KubeLease", () => {
  const lease = (sim: SimCluster, namespace = "claimstep") =>
    new KubeLease(sim.newClient(), { namespace, name: "claimstep-sweeper", timeoutMs: 5000 });

  it("reads no Lease as undefined, creates it, and a second create loses (AlreadyExists)", async () => {
    const sim = new SimCluster();
    const a = lease(sim);
    expect(await a.get()).toBeUndefined();
    const created = await a.create(spec("claimstep-a"));
    expect(created).toMatchObject({ kind: "written", lease: { spec: spec("claimstep-a") } });
    expect(await a.get()).toEqual((created as any).lease);
    expect(await lease(sim).create(spec("claimstep-b"))).toEqual({ kind: "lost" });
    expect(sim.get("leases", "claimstep", "claimstep-sweeper")?.spec).toEqual(spec("claimstep-a"));
  });

  it("updates under the resourceVersion read: a stale one loses (Conflict), the current one lands", async () => {
    const sim = new SimCluster();
    const a = lease(sim);
    const first = await a.create(spec("claimstep-a"));
    const rv = (first as any).lease.resourceVersion as string;
    const renewed = await a.update({ ...spec("claimstep-a"), renewTime: "2026-11-30T10:00:05.000000Z" }, rv);
    expect(renewed).toMatchObject({ kind: "written", lease: { spec: { renewTime: "2026-11-30T10:00:05.000000Z" } } });
    expect((renewed as any).lease.resourceVersion).not.toBe(rv);
    // Another replica still holding the first version tries to take over.
    expect(await lease(sim).update(spec("claimstep-b"), rv)).toEqual({ kind: "lost" });
    expect(sim.get("leases", "claimstep", "claimstep-sweeper")?.spec).toMatchObject({ holderIdentity: "claimstep-a" });
  });

  it("reports an API server it cannot reach as failed, and a get as an error", async () => {
    const sim = new SimCluster();
    sim.http.failNext("* leases", { code: 503 }, 2);
    const a = lease(sim);
    await expect(a.get()).rejects.toThrow(/leases/);
    expect(await a.create(spec("claimstep-a"))).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/leases/),
    });
  });
});
