// Issue 27: `claimstep set <sts> <template> --add …` and `--remove` on the simulated cluster (the
// real client takes the same code path: the status writer's annotateSet): what is written, what
// the output says happens next, kubectl's flag forms, and every refusal writing nothing.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

describe("claimstep set <sts> <template> --add", () => {
  it("writes the template, the re-create and the held pod template, and says what happens next", async () => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    const code = await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class=fast", "--mount-path", "/logs"],
      io,
      s.connect,
    );
    expect(err.text).toBe("");
    expect([0, 2]).toContain(code);
    const annotations = await s.annotations();
    const desired = JSON.parse(annotations[Keys.templates]);
    expect(desired.map((t: any) => t.metadata.name)).toEqual(["data", "wal", "logs"]);
    expect(desired[2].spec).toEqual({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "fast",
      resources: { requests: { storage: "1Gi" } },
    });
    expect(annotations[Keys.finalize]).toBe("Recreate");
    expect(JSON.parse(annotations[Keys.podTemplate]).spec.containers[0].volumeMounts).toEqual([
      { name: "logs", mountPath: "/logs" },
    ]);
    expect(out.text).toContain("default/web: added claim template logs (1Gi, class fast, ReadWriteOnce)");
    expect(out.text).toContain("pod template held with logs mounted at /logs in container app");
    expect(out.text).toContain(
      "claimstep re-creates web with logs after its claims are at the revision; pods restart one at a time from web-0",
    );
  });

  it("without --mount-path says the pods restart all the same; pflag forms (-c, --add=true) work", async () => {
    const s = await simOf("grow");
    const plain = capture();
    await main(
      ["set", "sts/web", "logs", "--add=true", "--storage=2Gi", "--storage-class", "fast"],
      plain.io,
      s.connect,
    );
    expect(plain.err.text).toBe("");
    expect(plain.out.text).toContain("the pod template does not mount logs");
    expect((await s.annotations())[Keys.podTemplate]).toBeUndefined();
    const t = await simOf("grow");
    const c = capture();
    await main(
      ["set", "web", "cache", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path=/cache", "-capp"],
      c.io,
      t.connect,
    );
    expect(c.err.text).toBe("");
    expect(JSON.parse((await t.annotations())[Keys.podTemplate]).spec.containers[0].volumeMounts).toEqual([
      { name: "cache", mountPath: "/cache" },
    ]);
  });

  it("--dry-run writes nothing and shows the annotations it would write; -o json carries them", async () => {
    const s = await simOf("grow");
    const before = s.writes();
    const dry = capture();
    await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--dry-run"],
      dry.io,
      s.connect,
    );
    expect(dry.err.text).toBe("");
    expect(s.writes()).toBe(before);
    expect(dry.out.text).toContain("default/web: dry run, nothing written. It would write:");
    expect(dry.out.text).toContain(`  ${Keys.finalize}: Recreate`);
    const json = capture();
    await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--dry-run", "-o", "json"],
      json.io,
      s.connect,
    );
    const doc = JSON.parse(json.out.text);
    expect(doc).toMatchObject({
      ref: { namespace: "default", name: "web" },
      dryRun: true,
      changed: true,
      added: "logs",
    });
    expect(doc.annotations[Keys.finalize]).toBe("Recreate");
    expect(doc.next).toMatch(/re-creates web with logs/);
    expect(doc.plan.decision.ref).toEqual({ namespace: "default", name: "web" });
    expect(s.writes()).toBe(before);
  });

  it.each([
    [
      ["set", "web", "data", "--add", "--storage", "1Gi", "--storage-class", "fast"],
      /already has claim template "data"/,
    ],
    [["set", "web", "logs", "--add", "--storage-class", "fast"], /--add needs --storage/],
    [
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "slow"],
      /StorageClass "slow" not found \(the cluster has: fast, premium\)/,
    ],
    [
      ["set", "web", "logs", "--add", "--storage", "1Gi"],
      /no --storage-class given and the cluster has no default StorageClass/,
    ],
    [["set", "web", "logs", "--add", "--remove"], /give --add or --remove, not both/],
    [["set", "web", "logs", "--storage", "1Gi", "--mount-path", "/logs"], /--mount-path goes with --add/],
    [
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--access-mode", "ReadWriteSome"],
      /--access-mode "ReadWriteSome"/,
    ],
    [
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path", "/l", "-c", "db"],
      /has no container "db" \(it has: app\)/,
    ],
    [["set", "web", "Logs", "--add", "--storage", "1Gi", "--storage-class", "fast"], /DNS-1123 label/],
    [
      ["set", "web", "logs", "--storage", "1Gi"],
      /has no claim template "logs" .*claimstep set web logs --add --storage <size>/,
    ],
    [["set", "web", "logs", "--remove"], /has no claim template "logs" \(it has: data, wal\); nothing to remove/],
    [["set", "web", "wal", "--remove", "--storage", "1Gi"], /--remove takes no --storage/],
  ])("%j is refused, naming the set and the fix; nothing written (exit 1)", async (argv, message) => {
    const s = await simOf("grow");
    const before = s.writes();
    const { io, out, err } = capture();
    expect(await main(argv, io, s.connect)).toBe(1);
    expect(err.text).toMatch(message);
    expect(err.text).toMatch(/nothing written|Nothing written/);
    expect(out.text).toBe("");
    expect(s.writes()).toBe(before);
  });
});

describe("claimstep set <sts> <template> --remove", () => {
  it("lists the template to remove and asks for the re-create; says the claims are kept", async () => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    const code = await main(["set", "web", "wal", "--remove"], io, s.connect);
    expect(err.text).toBe("");
    expect([0, 2]).toContain(code);
    const annotations = await s.annotations();
    expect(JSON.parse(annotations[Keys.removeTemplates])).toEqual(["wal"]);
    expect(JSON.parse(annotations[Keys.templates]).map((t: any) => t.metadata.name)).toEqual(["data"]);
    expect(annotations[Keys.finalize]).toBe("Recreate");
    expect(out.text).toContain("default/web: claim template wal to be removed");
    expect(out.text).toContain(
      "claimstep re-creates web without wal after its claims are at the revision; pods restart one at a time from web-0",
    );
    expect(out.text).toContain(
      `its claims (wal-web-0, wal-web-1, wal-web-2) are kept, labelled ${Keys.orphanedFrom}=web`,
    );
    // Again: nothing more to write.
    const again = capture();
    await main(["set", "web", "wal", "--remove", "-o", "json"], again.io, s.connect);
    expect(JSON.parse(again.out.text)).toMatchObject({ changed: false, removed: "wal" });
  });
});

describe("claimstep status <sts>: the claims of removed templates", () => {
  /** A kept claim of a removed template `cache` (no pod mounts it), and wal-web-1 labelled as one (web-1 mounts it). */
  const withOrphans = async () => {
    const s = await simOf("grow");
    await s.sim.admin.create(
      "persistentvolumeclaims",
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "cache-web-0", namespace: "default", labels: { app: "web", [Keys.orphanedFrom]: "web" } },
        spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "1Gi" } } },
      },
      { fieldManager: "test" },
    );
    await s.sim.admin.mergePatch(
      "persistentvolumeclaims",
      "default",
      "wal-web-1",
      { metadata: { labels: { [Keys.orphanedFrom]: "web" } } },
      { fieldManager: "test" },
    );
    return s;
  };

  it("lists them under their heading, with the command that deletes those no pod mounts", async () => {
    const s = await withOrphans();
    const before = s.writes();
    const { io, out, err } = capture();
    expect(await main(["status", "web"], io, s.connect), err.text).toBe(0);
    expect(out.text).toContain("Claims of removed templates (kept; claimstep never deletes a claim):");
    expect(out.text).toMatch(/ {2}cache-web-0 +cache +no pod mounts it\n/);
    expect(out.text).toMatch(/ {2}wal-web-1 +wal +still mounted by web-1 until it restarts\n/);
    expect(out.text).toContain("  kubectl delete pvc -n default cache-web-0\n");
    expect(s.writes()).toBe(before);
  });

  it("-o json carries them; a set without any shows none", async () => {
    const s = await withOrphans();
    const json = capture();
    expect(await main(["status", "web", "-o", "json"], json.io, s.connect)).toBe(0);
    const doc = JSON.parse(json.out.text);
    expect(doc.orphanedClaims).toEqual([
      { claim: "cache-web-0", template: "cache", mounted: false, note: "no pod mounts it" },
      {
        claim: "wal-web-1",
        template: "wal",
        mounted: true,
        pod: "web-1",
        note: "still mounted by web-1 until it restarts",
      },
    ]);
    expect(doc.deleteCommand).toBe("kubectl delete pvc -n default cache-web-0");
    const plain = await simOf("grow");
    const none = capture();
    expect(await main(["status", "web", "-o", "json"], none.io, plain.connect)).toBe(0);
    expect(JSON.parse(none.out.text)).not.toHaveProperty("orphanedClaims");
    const text = capture();
    await main(["status", "web"], text.io, plain.connect);
    expect(text.out.text).not.toContain("Claims of removed templates");
  });
});

describe("set --add / --remove through the real client (kubeconfig), as on a real cluster", () => {
  let kube: SocketSim;
  const dir = mkdtempSync(join(tmpdir(), "claimstep-templates-"));
  const kubeconfig = join(dir, "config");
  const flags = ["--kubeconfig", kubeconfig, "-n", "db"];

  beforeAll(async () => {
    kube = await serveSim({ token: "cli-user-token" });
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster: {server: "${kube.url}", insecure-skip-tls-verify: true}
users:
  - name: cli
    user: {token: cli-user-token}
contexts:
  - name: test
    context: {cluster: test, user: cli}
current-context: test
`,
    );
    kube.fake.seed(...storageClassObjects(), ...statefulSetObjects({ namespace: "db" }));
  });
  afterAll(async () => {
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("--add: one merge patch under the resourceVersion read, carrying the template, the re-create and the held pod template", async () => {
    kube.fake.http.resetCounters();
    const before: any = kube.fake.get("statefulsets", "db", "web");
    const { io, out, err } = capture();
    const code = await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path", "/logs", ...flags],
      io,
    );
    expect(err.text).toBe("");
    expect([0, 2]).toContain(code);
    expect(out.text).toMatch(/^db\/web: added claim template logs \(1Gi, class fast, ReadWriteOnce\)/);
    const patches = kube.fake.http.requests().filter((r) => r.verb === "patch");
    expect(patches).toHaveLength(1);
    expect(patches[0]).toMatchObject({
      resource: "statefulsets",
      name: "web",
      contentType: "application/merge-patch+json",
    });
    const body = patches[0]!.body as any;
    expect(body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(Object.keys(body.metadata.annotations).sort()).toEqual(
      [Keys.strategy, Keys.templates, Keys.finalize, Keys.finalizeFor, Keys.podTemplate, Keys.podTemplateBase].sort(),
    );
    const after: any = kube.fake.get("statefulsets", "db", "web");
    expect(JSON.parse(after.metadata.annotations[Keys.templates]).map((t: any) => t.metadata.name)).toContain("logs");
    expect(after.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)).not.toContain("logs");
  });

  it("--remove losing every race with another writer (4 attempts): exit 1, nothing written", async () => {
    for (let i = 0; i < 4; i++)
      kube.fake.http.beforeNext("patch statefulsets", () => {
        kube.fake.update("statefulsets", "db", "web", (o: any) => (o.spec.replicas = 5 + i));
      });
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--remove", ...flags], io)).toBe(1);
    expect(err.text).toMatch(/the object has been modified/);
    const after: any = kube.fake.get("statefulsets", "db", "web");
    expect(after.metadata.annotations[Keys.removeTemplates]).toBeUndefined();
  });
});

describe("through the CLI's doors, end to end on sim:remove-template", () => {
  it("a removal ends with the claims kept and listed; the template added back reuses them (same uids), none deleted", async () => {
    const s = await simOf("remove-template");
    const uids = () =>
      Object.fromEntries(s.sim.list("persistentvolumeclaims", "default").map((c) => [c.metadata.name, c.metadata.uid]));
    const kept = uids();
    expect(Object.keys(kept).filter((n) => n.startsWith("cache-"))).toHaveLength(3);
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const status = capture();
    expect(await main(["status", "web", "-o", "json"], status.io, s.connect)).toBe(0);
    expect(JSON.parse(status.out.text).deleteCommand).toBe(
      "kubectl delete pvc -n default cache-web-0 cache-web-1 cache-web-2",
    );
    const add = capture();
    await main(
      ["set", "web", "cache", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path", "/cache"],
      add.io,
      s.connect,
    );
    expect(add.err.text).toBe("");
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    expect(uids()).toEqual(kept);
    const labels = s.sim
      .list("persistentvolumeclaims", "default")
      .filter((c) => c.metadata.labels?.[Keys.orphanedFrom] !== undefined);
    expect(labels).toEqual([]);
    const pod: any = s.sim.get("pods", "default", "web-0");
    expect(
      pod.spec.volumes
        .map((v: any) => v.persistentVolumeClaim?.claimName)
        .filter(Boolean)
        .sort(),
    ).toEqual(["cache-web-0", "data-web-0"]);
    // The re-creates' orphan deletes are in the same log: the one for claims would be too.
    expect(s.sim.audit.filter((e) => e.verb === "delete" && e.resource === "statefulsets").length).toBeGreaterThan(0);
    expect(s.sim.audit.filter((e) => e.verb === "delete" && e.resource === "persistentvolumeclaims")).toEqual([]);
  });
});
