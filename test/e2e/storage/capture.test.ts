// Issue 34: the recordings the simulated cluster is checked against (test/fixtures/storage/) are
// still what the real components do. On the real node, a claim mounted by a running pod goes
// through the recordings' changes while a watch records every resourceVersion; the states, compared
// as test/adapters/sim/storage-conformance.test.ts compares the sim's, must be the recordings'.
// `CLAIMSTEP_CAPTURE=1` writes the live sequences into test/fixtures/storage/ instead (a new
// version of a component: capture, read the diff, then make the sim and claimstep meet it).
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { type ClaimState, distinct, recording, stateOf } from "../../support/claim-states.js";
import { type KubeObject, ok, useControlPlane, waitFor } from "../support/index.js";
import { Informer } from "../support/informer.js";
import { isPodReady, realContainer } from "../support/real-storage.js";

const e2e = useControlPlane({ prefix: "rs-capture" });
const CAPTURE = process.env.CLAIMSTEP_CAPTURE === "1";
const FIXTURES = new URL("../../fixtures/storage/", import.meta.url);
const report: string[] = [];

afterAll(() => {
  if (e2e.available)
    console.log(
      `issue 34, the real storage sequences (${e2e.info.realNode?.versions.join(", ")}):\n${report.join("\n")}`,
    );
});

interface Recorder {
  lines: string[];
  states(): ClaimState[];
  /** Waits until the claim's latest state satisfies `fn`. */
  until(fn: (c: KubeObject) => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A watch of one claim: each event as a recording line (type, resourceVersion, spec, status). */
async function record(name: string): Promise<Recorder> {
  const lines: string[] = [];
  const t0 = Date.now();
  let latest: KubeObject | undefined;
  const errors: string[] = [];
  const line = (c: KubeObject, type: string) =>
    lines.push(
      JSON.stringify({
        dt: (Date.now() - t0) / 1000,
        resourceVersion: c.metadata.resourceVersion,
        spec: {
          resources: c.spec?.resources,
          volumeAttributesClassName: c.spec?.volumeAttributesClassName ?? null,
          volumeName: c.spec?.volumeName,
        },
        status: c.status,
        ...(c.metadata.annotations?.["volume.kubernetes.io/node-expansion-not-required"]
          ? { metadata: { annotations: c.metadata.annotations } }
          : {}),
        t: new Date().toISOString(),
        type,
      }),
    );
  let synced = false;
  const informer = new Informer({
    credentials: e2e.info.admin,
    path: `/api/v1/namespaces/${e2e.namespace}/persistentvolumeclaims`,
    query: { fieldSelector: `metadata.name=${name}` },
    onError: (m) => errors.push(m),
    onChange: (type, c) => {
      if (!synced || !c || type === "SYNC" || type === "DELETED") return;
      latest = c;
      line(c, type);
    },
  });
  await informer.synced;
  // The claim as first listed (the recordings' INITIAL line); every watch event after it.
  latest = [...informer.store.values()].find((c) => c.metadata.name === name);
  if (!latest) throw new Error(`claim ${name} not found`);
  line(latest, "INITIAL");
  synced = true;
  return {
    lines,
    states: () => distinct(lines.map((l) => stateOf(JSON.parse(l)))),
    until: (fn, what, timeoutMs = 60_000) =>
      waitFor(async () => (latest && fn(latest)) || undefined, { timeoutMs, intervalMs: 100, what }).then(
        () => undefined,
      ),
    stop: async () => {
      await informer.stop();
      expect(errors).toEqual([]);
    },
  };
}

const patch = (name: string, body: unknown) =>
  e2e.api.patch("persistentvolumeclaims", name, body).then((r) => ok(r, `patch claim ${name}`));
const request = (storage: string) => ({ spec: { resources: { requests: { storage } } } });
const klass = (name: string | null) => ({ spec: { volumeAttributesClassName: name } });
const settled = (c: KubeObject) => !c.status?.allocatedResourceStatuses && !(c.status?.conditions ?? []).length;

/** A claim (1Gi) and a running pod mounting it at /data. */
async function mountedClaim(name: string): Promise<void> {
  const node = e2e.info.realNode!;
  ok(
    await e2e.api.create("persistentvolumeclaims", {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name },
      spec: {
        accessModes: ["ReadWriteOnce"],
        storageClassName: node.storageClass,
        resources: { requests: { storage: "1Gi" } },
      },
    }),
  );
  ok(
    await e2e.api.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `pod-${name}` },
      spec: {
        terminationGracePeriodSeconds: 1,
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        containers: [realContainer(node, ["data"])],
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: name } }],
      },
    }),
  );
  await waitFor(async () => isPodReady(ok(await e2e.api.get("pods", `pod-${name}`))) || undefined, {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `pod-${name} Ready`,
  });
}

/** Compares with the recording (or writes it); reports the live sequence. */
function compare(name: string, r: Recorder) {
  const live = r.states();
  report.push(
    `${name}: ${live.length} states: ${live.map((s) => s.allocation?.storage ?? s.modify?.status ?? (s.conditions.length ? s.conditions.map((c) => c.type).join("+") : "settled")).join(" → ")}`,
  );
  if (CAPTURE) {
    writeFileSync(new URL(`${name}.watch.jsonl`, FIXTURES), `${r.lines.join("\n")}\n`);
    return;
  }
  expect(live, `the live ${name} sequence differs from test/fixtures/storage/${name}.watch.jsonl`).toEqual(
    recording(name),
  );
}

describe.sequential("the real storage components, against the recordings", () => {
  it("expand: a mounted claim 1Gi → 2Gi", async () => {
    await mountedClaim("expand");
    const r = await record("expand");
    await patch("expand", request("2Gi"));
    await r.until((c) => c.status?.capacity?.storage === "2Gi" && settled(c), "expand at 2Gi, settled");
    await r.stop();
    compare("expand", r);
  });

  it("infeasible: 20Gi (above the driver's 10Gi), then lowered to 3Gi", async () => {
    await mountedClaim("infeasible");
    const r = await record("infeasible");
    await patch("infeasible", request("20Gi"));
    await r.until(
      (c) =>
        c.status?.allocatedResourceStatuses?.storage === "ControllerResizeInfeasible" &&
        (c.status?.conditions ?? []).some((x: { type: string }) => x.type === "ControllerResizeError"),
      "ControllerResizeInfeasible",
    );
    await patch("infeasible", request("3Gi"));
    await r.until((c) => c.status?.capacity?.storage === "3Gi" && settled(c), "infeasible at 3Gi, settled");
    await r.stop();
    compare("infeasible", r);
  });

  it("vac: to an accepted class, to a refused one, back while Infeasible", async () => {
    const driver = e2e.info.realNode!.driver;
    const vac = (name: string, parameters: Record<string, string>) => ({
      apiVersion: "storage.k8s.io/v1",
      kind: "VolumeAttributesClass",
      metadata: { name },
      driverName: driver,
      parameters,
    });
    // The recordings' names: cluster-scoped, one run at a time on this node.
    await e2e.admin.create("volumeattributesclasses", null, vac("hostpath-fast", { iops: "3000", throughput: "125" }));
    await e2e.admin.create("volumeattributesclasses", null, vac("hostpath-bad", { tier: "gold" }));
    await mountedClaim("vac");
    const r = await record("vac");
    await patch("vac", klass("hostpath-fast"));
    await r.until(
      (c) =>
        c.status?.currentVolumeAttributesClassName === "hostpath-fast" && settled(c) && !c.status?.modifyVolumeStatus,
      "hostpath-fast applied",
    );
    await patch("vac", klass("hostpath-bad"));
    await r.until((c) => c.status?.modifyVolumeStatus?.status === "Infeasible", "hostpath-bad Infeasible");
    await patch("vac", klass("hostpath-fast"));
    await r.until(
      (c) => !c.status?.modifyVolumeStatus && !(c.status?.conditions ?? []).length,
      "back at hostpath-fast, settled",
    );
    await r.stop();
    compare("vac", r);
  });

  it("a class that does not exist yet: Pending, not woken by the class's creation nor an annotation; woken by a change of the claim's class", async () => {
    const later = `${e2e.namespace}-later`;
    await mountedClaim("pending");
    const r = await record("pending");
    await patch("pending", klass(later));
    await r.until((c) => c.status?.modifyVolumeStatus?.status === "Pending", "Pending");
    ok(
      await e2e.admin.create("volumeattributesclasses", null, {
        apiVersion: "storage.k8s.io/v1",
        kind: "VolumeAttributesClass",
        metadata: { name: later },
        driverName: e2e.info.realNode!.driver,
        parameters: { iops: "3000" },
      }),
    );
    await new Promise((res) => setTimeout(res, 5_000));
    await patch("pending", { metadata: { annotations: { "example.com/touch": "1" } } });
    await new Promise((res) => setTimeout(res, 3_000));
    const stuck = ok(await e2e.api.get("persistentvolumeclaims", "pending"));
    expect(stuck.status?.modifyVolumeStatus, "still Pending 8 s after the class was created").toEqual({
      status: "Pending",
    });
    // The claim had no class before: the API server lets it go back to none, and a new change wakes the modifier.
    await patch("pending", klass(null));
    await patch("pending", klass(later));
    await r.until(
      (c) => c.status?.currentVolumeAttributesClassName === later && !c.status?.modifyVolumeStatus,
      `${later} applied after the claim's class changed`,
      30_000,
    );
    await r.stop();
    await e2e.admin.delete("volumeattributesclasses", null, later).catch(() => undefined);
    report.push(`pending: ${r.states().length} states; Pending until the claim's class changed, then applied`);
  });

  afterAll(async () => {
    if (!e2e.available) return;
    for (const n of ["hostpath-fast", "hostpath-bad"])
      await e2e.admin.delete("volumeattributesclasses", null, n).catch(() => undefined);
  });
});
