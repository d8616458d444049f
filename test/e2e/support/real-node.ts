// A real one-node cluster for the real-storage suite (issue 34): etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, containerd + kubelet v1.34.2 in a network namespace of
// their own, and the CSI hostpath driver with its external-provisioner, external-resizer and
// node-driver-registrar — started by real-node/up.sh from the binaries in CLAIMSTEP_NODE_ASSETS
// (never from a path outside the repository), stopped by real-node/down.sh, which stops only what
// up.sh recorded. claimstep's shipped RBAC is applied verbatim and its ServiceAccount gets a token,
// as on the control-plane-only cluster.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  CLAIMSTEP_USER,
  type ControlPlane,
  FEATURE_GATES,
  installClaimstepIdentity,
  kubeconfigYaml,
  ok,
  Rest,
} from "./control-plane.js";
import type { Credentials } from "./rest.js";

const execFileP = promisify(execFile);
const HERE = join(dirname(fileURLToPath(import.meta.url)), "real-node");

/** What the tests need to know about the real node (plain data, provided to the workers). */
export interface RealNodeInfo {
  workdir: string;
  nodeName: string;
  /** The default StorageClass (hostpath.csi.k8s.io, Immediate, allowVolumeExpansion). */
  storageClass: string;
  driver: string;
  /** The driver's volumes, one directory per volume handle: the tests read the pods' files here. */
  stateDir: string;
  /** The driver refuses a volume larger than this (gRPC OutOfRange → ControllerResizeInfeasible). */
  maxVolumeBytes: number;
  /** VolumeAttributesClass parameter names the driver accepts (anything else is Infeasible). */
  mutableParameters: string[];
  /** The image the pods run (imported into containerd from the node archive; never pulled). */
  image: string;
  /** kubelet syncFrequency: the node half of an online expansion takes up to this long. */
  syncFrequencySeconds: number;
  /** "<component> <version>" lines of the archives' VERSIONS files and the binaries. */
  versions: string[];
  upMs: number;
  logsDir: string;
}

/** Why this machine cannot run the real node, or undefined when it can. */
export function realNodeUnavailable(assetsDir: string | undefined): string | undefined {
  if (!assetsDir) return "CLAIMSTEP_NODE_ASSETS is not set";
  if (process.getuid?.() !== 0) return "the kubelet and containerd need root";
  for (const b of ["kubelet", "kube-scheduler", "kube-apiserver", "hostpathplugin", "csi-resizer", "csi-provisioner"])
    if (!existsSync(join(assetsDir, b))) return `${join(assetsDir, b)} is missing`;
  for (const c of ["containerd", "runc", "socat", "etcd", "nsenter", "ip"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${c}`], { stdio: "ignore" });
    } catch {
      return `${c} is not installed (apt-get install containerd runc containernetworking-plugins socat etcd-server)`;
    }
  }
  if (!existsSync("/usr/lib/cni/bridge"))
    return "/usr/lib/cni/bridge is missing (apt-get install containernetworking-plugins)";
  return undefined;
}

async function freePortBase(): Promise<number> {
  // up.sh takes PORT_BASE+1 … +8; try bases until nine ports in a row are free on 127.0.0.1.
  const free = (port: number) =>
    new Promise<boolean>((res) => {
      const s = createServer();
      s.once("error", () => res(false));
      s.listen(port, "127.0.0.1", () => s.close(() => res(true)));
    });
  for (let base = 21000; base < 30000; base += 100) {
    let all = true;
    for (let p = base; p <= base + 8 && all; p++) all = await free(p);
    if (all) return base;
  }
  throw new Error("claimstep e2e: no free range of 9 ports on 127.0.0.1 between 21000 and 30000");
}

function readEnvFile(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^(?:export )?([A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

export interface RealNodeOptions {
  assetsDir: string;
  log?: (line: string) => void;
}

/** Brings the whole cluster up (13–15 s here) and returns it with claimstep's identity installed. */
export async function startRealNode(opts: RealNodeOptions): Promise<ControlPlane & { realNode: RealNodeInfo }> {
  const t0 = Date.now();
  const workdir = mkdtempSync(join(tmpdir(), "claimstep-node-"));
  const portBase = await freePortBase();
  const settings = {
    NODE_NAME: "csi-node",
    STORAGE_CLASS: "csi-hostpath",
    DRIVER_NAME: "hostpath.csi.k8s.io",
    MAX_VOLUME_BYTES: String(10 * 1024 ** 3),
    MUTABLE_PARAMETERS: "iops,throughput",
    SYNC_FREQUENCY: "10s",
  };
  const down = () => execFileSync("bash", [join(HERE, "down.sh"), workdir], { stdio: "ignore" });
  // Last resort when vitest exits without its teardown: the kubelet's cgroups are host-wide.
  const onExit = () => {
    try {
      down();
    } catch {
      /* best effort */
    }
  };
  process.once("exit", onExit);
  try {
    await execFileP("bash", [join(HERE, "up.sh"), workdir, String(portBase)], {
      env: {
        ...process.env,
        BIN: opts.assetsDir,
        FEATURE_GATES: FEATURE_GATES.join(","),
        ...settings,
      },
      maxBuffer: 16 << 20,
    });
  } catch (e) {
    process.removeListener("exit", onExit);
    const err = e as { stderr?: string; message: string };
    throw new Error(
      `claimstep e2e: the real node did not come up (logs in ${workdir}/logs):\n${err.stderr?.slice(-4000) ?? err.message}`,
    );
  }
  const upMs = Date.now() - t0;
  opts.log?.(`real node up in ${upMs} ms (${workdir})`);
  const env = readEnvFile(join(workdir, "env"));
  const server = env.APISERVER!;
  const caPem = readFileSync(join(workdir, "pki/ca.crt"), "utf8");
  const admin: Credentials = { server, caPem, token: env.ADMIN_TOKEN!, userAgent: "claimstep-e2e-admin" };
  const rest = new Rest(admin);
  try {
    const t1 = Date.now();
    const claimstepToken = await installClaimstepIdentity(rest);
    const rbacMs = Date.now() - t1;
    const claimstepKubeconfig = join(workdir, "claimstep.kubeconfig");
    writeFileSync(claimstepKubeconfig, kubeconfigYaml(server, caPem, { token: claimstepToken }), { mode: 0o600 });
    const version = ok(await rest.request<{ gitVersion: string }>("GET", "/version"), "GET /version").gitVersion;
    // What runs, as each binary reports itself (CI's log names them).
    const versionOf = async (bin: string, args = ["--version"]) => {
      const { stdout, stderr } = await execFileP(bin, args).catch((e) => e as { stdout: string; stderr: string });
      const line = `${stdout ?? ""}${stderr ?? ""}`.split("\n")[0] ?? "";
      return /v?\d+\.\d+\.\d+\S*/.exec(line)?.[0] ?? "unknown";
    };
    const versions = [
      `kube-apiserver ${version}`,
      ...(await Promise.all(
        [
          "kubelet",
          "kube-scheduler",
          "csi-resizer",
          "csi-provisioner",
          "csi-node-driver-registrar",
          "hostpathplugin",
        ].map(async (b) => `${b} ${await versionOf(join(opts.assetsDir, b))}`),
      )),
      `containerd ${await versionOf("containerd")}`,
      `runc ${await versionOf("runc")}`,
    ];
    return {
      mode: "node",
      server,
      caPem,
      admin,
      adminToken: env.ADMIN_TOKEN!,
      claimstepToken,
      claimstepUser: CLAIMSTEP_USER,
      adminKubeconfig: join(workdir, "admin.kubeconfig"),
      claimstepKubeconfig,
      auditLogPath: join(workdir, "logs/audit.log"),
      version,
      featureGates: FEATURE_GATES,
      dir: workdir,
      startupMs: { etcd: 0, apiserver: upMs, controllerManager: 0, rbac: rbacMs },
      realNode: {
        workdir,
        nodeName: settings.NODE_NAME,
        storageClass: settings.STORAGE_CLASS,
        driver: settings.DRIVER_NAME,
        stateDir: join(workdir, "csi/state"),
        maxVolumeBytes: Number(settings.MAX_VOLUME_BYTES),
        mutableParameters: settings.MUTABLE_PARAMETERS.split(","),
        image: "localhost/csi-e2e/busybox:1.35.0",
        syncFrequencySeconds: 10,
        versions,
        upMs,
        logsDir: join(workdir, "logs"),
      },
      stop: async () => {
        process.removeListener("exit", onExit);
        await execFileP("bash", [join(HERE, "down.sh"), workdir]).catch((e) =>
          console.warn(`claimstep e2e: down.sh ${workdir}: ${e instanceof Error ? e.message : String(e)}`),
        );
        // The directory holds etcd's data and every volume; keep it only when asked, and never
        // remove it while anything is still mounted under it.
        const mounted = readFileSync("/proc/self/mounts", "utf8").includes(` ${workdir}/`);
        if (process.env.CLAIMSTEP_E2E_KEEP !== "1" && !mounted) rmSync(workdir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    process.removeListener("exit", onExit);
    down();
    throw e;
  }
}
