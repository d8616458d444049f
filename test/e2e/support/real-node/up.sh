#!/usr/bin/env bash
# claimstep's real-node rig (issue 34), started by test/e2e/support/real-node.ts; adapted from the
# bring-up script of the team's CSI test stack: binaries only from BIN (unpacked by .ci/run from the
# archives named in CLAIMSTEP_NODE_ASSETS's README section), never from a path outside the repository.
# up.sh WORKDIR [PORT_BASE] — start a one-node Kubernetes v1.34.2 cluster with a real storage stack:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd, kubelet,
# the CSI hostpath driver with node-driver-registrar, external-provisioner and external-resizer.
# Network rule: the host only ever talks to 127.0.0.1. The node (containerd, kubelet, the CNI bridge
# and the pods' veths) lives in its own network namespace NODE_NETNS (made here, with NODE_IP on its
# lo); containerd and the kubelet run there through `nsenter --net` but stay in the host mount
# namespace. kubelet -> apiserver and apiserver -> kubelet cross the namespace boundary over unix
# sockets only (socat, and the apiserver's egress selector with a small CONNECT proxy in the node
# namespace); no address is added to the host's interfaces and nothing is routed.
# All state, logs and pid files live under WORKDIR; down.sh WORKDIR stops what this started.
# Progress goes to stderr; the only line on stdout is the admin kubeconfig path, so
#   KUBECONFIG=$(up.sh /some/dir 21000)   works.
# Needs root and the Debian packages named in README.md. No network access is needed.
set -euo pipefail

W=${1:-${WORKDIR:-}}
[ -n "$W" ] || { echo "usage: up.sh WORKDIR [PORT_BASE]   (env: PORT_BASE, NODE_NAME, NODE_IP, ...)" >&2; exit 2; }
if [ -n "${2:-}" ]; then PORT_BASE=$2; fi
mkdir -p "$W"; W=$(cd "$W" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$(date +%s%N)

# ---- settings (override through the environment) ---------------------------------------
PORT_BASE=${PORT_BASE:-21000}
ETCD_PORT=${ETCD_PORT:-$((PORT_BASE + 1))}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-$((PORT_BASE + 2))}
ETCD_METRICS_PORT=${ETCD_METRICS_PORT:-$((PORT_BASE + 3))}
APISERVER_PORT=${APISERVER_PORT:-$((PORT_BASE + 4))}
KCM_PORT=${KCM_PORT:-$((PORT_BASE + 5))}
SCHEDULER_PORT=${SCHEDULER_PORT:-$((PORT_BASE + 6))}
KUBELET_PORT=${KUBELET_PORT:-$((PORT_BASE + 7))}
KUBELET_HEALTHZ_PORT=${KUBELET_HEALTHZ_PORT:-$((PORT_BASE + 8))}
NODE_NAME=${NODE_NAME:-csi-node}
NODE_IP=${NODE_IP:-10.250.0.1}                  # on lo inside NODE_NETNS, never on the host
NODE_NETNS=${NODE_NETNS:-csie2e-$(printf %s "$W" | sha256sum | cut -c1-8)}   # ip netns name, one per WORKDIR
POD_SUBNET=${POD_SUBNET:-10.250.1.0/24}
CNI_BRIDGE=${CNI_BRIDGE:-csie2e0}
SYNC_FREQUENCY=${SYNC_FREQUENCY:-10s}
FEATURE_GATES=${FEATURE_GATES:-}
DRIVER_NAME=${DRIVER_NAME:-hostpath.csi.k8s.io}
STORAGE_CLASS=${STORAGE_CLASS:-csi-hostpath}
VOLUME_BINDING_MODE=${VOLUME_BINDING_MODE:-Immediate}
MAX_VOLUME_BYTES=${MAX_VOLUME_BYTES:-10737418240}          # 10Gi: a bigger request is infeasible
MUTABLE_PARAMETERS=${MUTABLE_PARAMETERS:-iops,throughput}  # VolumeAttributesClass keys the driver accepts
PAUSE_IMAGE=${PAUSE_IMAGE:-localhost/csi-e2e/pause:1}
BIN=${BIN:?set BIN to the directory with the unpacked kube, csi and node archives}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
PYTHON=${PYTHON:-$(command -v python3 || true)}
CONTROLLERS=${CONTROLLERS:-statefulset,garbagecollector,persistentvolume-binder,persistentvolume-expander,serviceaccount,serviceaccount-token,namespace,resourcequota,pvc-protection,pv-protection,disruption,nodelifecycle,root-ca-cert-publisher,service-ca-cert-publisher,replicaset,deployment,ephemeral-volume}

elapsed() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); printf '%d.%01d' $((ms / 1000)) $(((ms % 1000) / 100)); }
log() { printf '[up %5ss] %s\n' "$(elapsed)" "$*" >&2; }
die() {  # stop whatever this run started (unless KEEP_ON_FAILURE=1), then fail
  echo "up.sh: $*" >&2
  if [ "${KEEP_ON_FAILURE:-}" != 1 ] && { [ -s "${D_RUN:-/nonexistent}/pids" ] || [ -f "${D_RUN:-/nonexistent}/netns" ]; }; then
    echo "up.sh: stopping what was started (logs stay in $W/logs)" >&2; "$HERE/down.sh" "$W" >&2 || true
  fi
  exit 1
}
trap 'die "command failed at line $LINENO"' ERR
[ "$(id -u)" = 0 ] || die "must run as root"
for c in etcd containerd runc ctr openssl curl ip mount setsid nsenter socat sha256sum; do command -v "$c" >/dev/null || die "missing command $c"; done
[ -n "$PYTHON" ] || die "missing command python3"
[ -x "$CNI_BIN_DIR/bridge" ] && [ -x "$CNI_BIN_DIR/host-local" ] && [ -x "$CNI_BIN_DIR/loopback" ] || die "CNI plugins not found in $CNI_BIN_DIR"
[ -e "$W/run/pids" ] && { echo "up.sh: $W already holds a running cluster (run down.sh $W first)" >&2; exit 1; }
[ -e "/run/netns/$NODE_NETNS" ] && { echo "up.sh: network namespace $NODE_NETNS already exists (left by a killed run? check, then: ip netns del $NODE_NETNS)" >&2; exit 1; }
for p in $ETCD_PORT $ETCD_PEER_PORT $ETCD_METRICS_PORT $APISERVER_PORT $KCM_PORT $SCHEDULER_PORT; do
  (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { echo "up.sh: port 127.0.0.1:$p is in use (set PORT_BASE)" >&2; exit 1; }
done

D_PKI=$W/pki D_LOG=$W/logs D_RUN=$W/run
mkdir -p "$W/tools" "$D_PKI" "$D_LOG" "$D_RUN" "$W/etcd" "$W/containerd" "$W/cni/net.d" "$W/cni/ipam" \
         "$W/kubelet" "$W/csi/state" "$W/manifests"
: > "$D_RUN/pids"

# ---- binaries ------------------------------------------------------------------------------
need_bins="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl hostpathplugin csi-provisioner csi-resizer csi-node-driver-registrar"
for b in $need_bins; do [ -x "$BIN/$b" ] || die "$BIN/$b missing"; done
KUBECTL="$BIN/kubectl --kubeconfig=$W/admin.kubeconfig"

start() {  # start NAME CMD... : run in the background, log to logs/NAME.log, record the pid
  local name=$1; shift
  setsid "$@" >"$D_LOG/$name.log" 2>&1 < /dev/null &
  echo "$name $!" >> "$D_RUN/pids"
}
wait_for() {  # wait_for SECONDS DESCRIPTION CMD...
  local t=$1 what=$2; shift 2; local end=$(( $(date +%s) + t ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || die "timed out waiting for $what (see $D_LOG)"
    sleep 0.2
  done
}

# ---- certificates and credentials ---------------------------------------------------------
if [ ! -f "$D_PKI/ca.crt" ]; then
  cd "$D_PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=csi-e2e-ca" 2>/dev/null
  sign() {  # sign NAME SUBJECT [SAN]
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    if [ -n "${3:-}" ]; then printf 'subjectAltName=%s\n' "$3" > "$1.ext"; else : > "$1.ext"; fi
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 -extfile "$1.ext" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
  }
  sign serving "/CN=kube-apiserver" "IP:127.0.0.1,DNS:localhost"
  sign kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ADMIN_TOKEN=$(openssl rand -hex 24); NODE_TOKEN=$(openssl rand -hex 24)
  { echo "$ADMIN_TOKEN,admin,admin-uid,\"system:masters\""
    echo "$NODE_TOKEN,system:node:$NODE_NAME,node-uid,\"system:nodes\""; } > tokens.csv
  chmod 600 tokens.csv ./*.key
  cd - >/dev/null
fi
ADMIN_TOKEN=$(sed -n 1p "$D_PKI/tokens.csv" | cut -d, -f1)
NODE_TOKEN=$(sed -n 2p "$D_PKI/tokens.csv" | cut -d, -f1)
kubeconfig() {  # kubeconfig FILE USER TOKEN
  cat > "$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $D_PKI/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
KC
  chmod 600 "$1"
}
kubeconfig "$W/admin.kubeconfig" admin "$ADMIN_TOKEN"
kubeconfig "$W/kubelet.kubeconfig" "system:node:$NODE_NAME" "$NODE_TOKEN"

# ---- node network namespace and the unix-socket bridges ------------------------------------------
# The host gets no address and no route: NODE_IP lives on lo inside NODE_NETNS, where containerd,
# the kubelet, the CNI bridge and the pods' veths live too. NSENTER runs a program in that network
# namespace but in the host mount namespace (so kubelet, containerd and the CSI driver see the same
# mounts; `ip netns exec` would give each its own mount namespace).
ip netns add "$NODE_NETNS"
echo "$NODE_NETNS" > "$D_RUN/netns"
ip -n "$NODE_NETNS" link set lo up
ip -n "$NODE_NETNS" addr add "$NODE_IP/32" dev lo
NSENTER="nsenter --net=/run/netns/$NODE_NETNS"
# kubelet -> apiserver: 127.0.0.1:APISERVER_PORT in the node namespace -> run/apiserver.sock -> 127.0.0.1:APISERVER_PORT on the host
rm -f "$D_RUN/apiserver.sock" "$D_RUN/kubelet-egress.sock"
start socat-apiserver-host socat UNIX-LISTEN:"$D_RUN/apiserver.sock",fork,unlink-early,mode=600 TCP:127.0.0.1:"$APISERVER_PORT"
start socat-apiserver-node $NSENTER socat TCP-LISTEN:"$APISERVER_PORT",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$D_RUN/apiserver.sock"
# apiserver -> kubelet (exec, logs, port-forward, node/pod proxy): the apiserver's egress selector
# sends an HTTP CONNECT over run/kubelet-egress.sock to node-connect-proxy in the node namespace,
# which connects to NODE_IP or a pod address there (nothing else is allowed).
cat > "$W/tools/node-connect-proxy.py" <<'PY'
#!/usr/bin/env python3
"""node-connect-proxy.py SOCKET CIDR... : HTTP CONNECT proxy listening on a unix socket. Meant to run
inside the node's network namespace; the kube-apiserver reaches the kubelet (and pods) through it via
its egress selector (proxyProtocol HTTPConnect, transport uds). Only IP targets inside CIDR... are
allowed; anything else gets 403."""
import ipaddress, os, socket, sys, threading
path, nets = sys.argv[1], [ipaddress.ip_network(a, strict=False) for a in sys.argv[2:]]
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def handle(c):
    u = None
    try:
        buf = b''
        while b'\r\n\r\n' not in buf:
            d = c.recv(4096)
            if not d or len(buf) > 16384:
                return
            buf += d
        head, rest = buf.split(b'\r\n\r\n', 1)
        req = head.split(b'\r\n')[0].decode('latin-1').split()
        if len(req) < 2 or req[0] != 'CONNECT':
            c.sendall(b'HTTP/1.1 405 Method Not Allowed\r\n\r\n'); return
        host, port = req[1].rsplit(':', 1)
        try:
            ip = ipaddress.ip_address(host.strip('[]'))
        except ValueError:
            ip = None
        if ip is None or not any(ip in n for n in nets):
            sys.stderr.write(f'refused CONNECT {req[1]}\n'); c.sendall(b'HTTP/1.1 403 Forbidden\r\n\r\n'); return
        try:
            u = socket.create_connection((str(ip), int(port)), timeout=10)
        except OSError as e:
            sys.stderr.write(f'CONNECT {req[1]}: {e}\n'); c.sendall(b'HTTP/1.1 502 Bad Gateway\r\n\r\n'); return
        u.settimeout(None)
        c.sendall(b'HTTP/1.1 200 Connection established\r\n\r\n')
        if rest:
            u.sendall(rest)
        t = threading.Thread(target=pipe, args=(u, c), daemon=True); t.start()
        pipe(c, u); t.join()
    except OSError:
        pass
    finally:
        for s in (c, u):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
try:
    os.unlink(path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind(path); os.chmod(path, 0o600); srv.listen(64)
while True:
    conn, _ = srv.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
PY
chmod 755 "$W/tools/node-connect-proxy.py"
start node-connect-proxy $NSENTER "$PYTHON" "$W/tools/node-connect-proxy.py" "$D_RUN/kubelet-egress.sock" "$NODE_IP/32" "$POD_SUBNET"
cat > "$W/egress-selector.yaml" <<EG
apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: $D_RUN/kubelet-egress.sock
EG
log "network namespace $NODE_NETNS (node address $NODE_IP on its lo), unix-socket bridges started"

# ---- etcd, kube-apiserver ------------------------------------------------------------------
start etcd etcd --name default --data-dir "$W/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT"
wait_for 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
log "etcd up on 127.0.0.1:$ETCD_PORT"

cat > "$W/audit-policy.yaml" <<AP
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:node:$NODE_NAME"]
  verbs: [get, watch, list]
- level: Metadata
AP
fg=(); if [ -n "$FEATURE_GATES" ]; then fg=(--feature-gates="$FEATURE_GATES"); fi
start kube-apiserver "$BIN/kube-apiserver" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port="$APISERVER_PORT" --etcd-servers="http://127.0.0.1:$ETCD_PORT" --cert-dir="$D_PKI/apiserver" \
  --tls-cert-file="$D_PKI/serving.crt" --tls-private-key-file="$D_PKI/serving.key" \
  --token-auth-file="$D_PKI/tokens.csv" --anonymous-auth=false --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NamespaceLifecycle,ServiceAccount,DefaultStorageClass,PersistentVolumeClaimResize,ResourceQuota \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$D_PKI/sa.pub" --service-account-signing-key-file="$D_PKI/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none --allow-privileged=true \
  --kubelet-client-certificate="$D_PKI/kubelet-client.crt" --kubelet-client-key="$D_PKI/kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP --egress-selector-config-file="$W/egress-selector.yaml" \
  --audit-policy-file="$W/audit-policy.yaml" --audit-log-path="$D_LOG/audit.log" \
  --audit-log-maxsize=100 --audit-log-maxbackup=2 "${fg[@]}"
wait_for 60 kube-apiserver curl -sf --cacert "$D_PKI/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
  "https://127.0.0.1:$APISERVER_PORT/readyz"
log "kube-apiserver ready on https://127.0.0.1:$APISERVER_PORT"

# ---- controller-manager, scheduler ---------------------------------------------------------
start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$W/admin.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$D_PKI/kcm" \
  --controllers="$CONTROLLERS" --use-service-account-credentials=false --leader-elect=false \
  --service-account-private-key-file="$D_PKI/sa.key" --root-ca-file="$D_PKI/ca.crt" "${fg[@]}"
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$W/admin.kubeconfig" \
  --authentication-kubeconfig="$W/admin.kubeconfig" --authorization-kubeconfig="$W/admin.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --cert-dir="$D_PKI/scheduler" --leader-elect=false "${fg[@]}"

# ---- containerd --------------------------------------------------------------------------------
# The sandbox lacks CAP_SYS_RESOURCE, so a negative oom_score_adj (kubelet asks -998 for the pod
# sandbox, -997 for Guaranteed pods) cannot be set. containerd clamps it to its own value when
# restrict_oom_score_adj is on; runc-oom-clamp (below) does the same for anything that gets past it.
cat > "$W/tools/runc-oom-clamp" <<'RW'
#!/bin/sh
# Wrapper around runc: before "create"/"run", clamp a negative process.oomScoreAdj in the bundle's
# config.json to 0 (setting a negative value needs CAP_SYS_RESOURCE).
bundle=""; prev=""
for a in "$@"; do
  case "$prev" in --bundle|-b) bundle=$a ;; esac
  case "$a" in --bundle=*) bundle=${a#--bundle=} ;; esac
  prev=$a
done
if [ -n "$bundle" ] && [ -f "$bundle/config.json" ]; then
  sed -i -E 's/"oomScoreAdj":-[0-9]+/"oomScoreAdj":0/' "$bundle/config.json"
fi
exec runc "$@"
RW
chmod 755 "$W/tools/runc-oom-clamp"
CTR_SOCK=$W/containerd/containerd.sock
cat > "$W/containerd/config.toml" <<CT
version = 2
root = "$W/containerd/root"
state = "$W/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = "$CTR_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$W/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$W/tools/runc-oom-clamp"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$W/cni/net.d"
    max_conf_num = 1
CT
cat > "$W/cni/net.d/10-csi-e2e.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "csi-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$W/cni/ipam",
        "ranges": [[{"subnet": "$POD_SUBNET"}]]
      }
    }
  ]
}
CNI
# containerd (and with it the CNI plugins it runs and the shims) in the node network namespace:
# the bridge CNI_BRIDGE and the pods' host-side veths are created there, not on the host.
start containerd $NSENTER containerd --config "$W/containerd/config.toml"
wait_for 30 containerd ctr -a "$CTR_SOCK" version
for img in "$BIN"/images/*.tar; do
  ctr -a "$CTR_SOCK" -n k8s.io images import "$img" >> "$D_LOG/images.log" 2>&1 || die "image import $img failed"
done
log "containerd up, images: $(ctr -a "$CTR_SOCK" -n k8s.io images ls -q | grep -v '^sha256:' | tr '\n' ' ')"

# ---- kubelet -------------------------------------------------------------------------------------
KFG=""; if [ -n "$FEATURE_GATES" ]; then
  KFG="featureGates:"; IFS=, read -ra kv <<< "$FEATURE_GATES"
  for p in "${kv[@]}"; do KFG="$KFG"$'\n'"  ${p%%=*}: ${p#*=}"; done
fi
cat > "$W/kubelet/config.yaml" <<KY
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $D_PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CTR_SOCK
cgroupDriver: cgroupfs
failSwapOn: false
syncFrequency: $SYNC_FREQUENCY
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 10s
resolvConf: ""
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
podLogsDir: $W/kubelet/pod-logs
volumePluginDir: $W/kubelet/volume-plugins
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
maxPods: 110
rotateCertificates: false
serverTLSBootstrap: false
$KFG
KY
start kubelet $NSENTER "$BIN/kubelet" --config="$W/kubelet/config.yaml" --kubeconfig="$W/kubelet.kubeconfig" \
  --root-dir="$W/kubelet" --cert-dir="$D_PKI/kubelet" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=2

# ---- CSI hostpath driver and sidecars (host processes, talking over one unix socket) ----------
CSI_SOCK=$W/csi/csi.sock
mkdir -p "$W/kubelet/plugins_registry"
start csi-hostpathplugin "$BIN/hostpathplugin" --endpoint="unix://$CSI_SOCK" --nodeid="$NODE_NAME" \
  --drivername="$DRIVER_NAME" --statedir="$W/csi/state" --max-volume-size="$MAX_VOLUME_BYTES" \
  --enable-topology=false --enable-controller-modify-volume=true \
  --accepted-mutable-parameter-names="$MUTABLE_PARAMETERS" --v=4
wait_for 30 "CSI socket" test -S "$CSI_SOCK"
start csi-node-driver-registrar "$BIN/csi-node-driver-registrar" --csi-address="$CSI_SOCK" \
  --kubelet-registration-path="$CSI_SOCK" --plugin-registration-path="$W/kubelet/plugins_registry" --v=4
start csi-provisioner "$BIN/csi-provisioner" --csi-address="$CSI_SOCK" --kubeconfig="$W/admin.kubeconfig" \
  --leader-election=false --timeout=30s --extra-create-metadata --v=4
start csi-resizer "$BIN/csi-resizer" --csi-address="$CSI_SOCK" --kubeconfig="$W/admin.kubeconfig" \
  --leader-election=false --timeout=30s --handle-volume-inuse-error=false --v=4

# ---- cluster objects ---------------------------------------------------------------------------
cat > "$W/manifests/storage.yaml" <<ST
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: $DRIVER_NAME
spec:
  attachRequired: false
  podInfoOnMount: true
  fsGroupPolicy: File
  volumeLifecycleModes: [Persistent, Ephemeral]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $STORAGE_CLASS
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: $DRIVER_NAME
reclaimPolicy: Delete
volumeBindingMode: $VOLUME_BINDING_MODE
allowVolumeExpansion: true
ST
wait_for 30 "default namespace" $KUBECTL get serviceaccount default -n default
$KUBECTL apply -f "$W/manifests/storage.yaml" > "$D_LOG/apply.log"

node_ready() { [ "$($KUBECTL get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for 90 "node $NODE_NAME Ready" node_ready
log "node $NODE_NAME Ready"
csinode_ok() { $KUBECTL get csinode "$NODE_NAME" -o jsonpath='{.spec.drivers[*].name}' | grep -qw "$DRIVER_NAME"; }
wait_for 60 "CSI driver registration" csinode_ok
log "CSI driver $DRIVER_NAME registered on $NODE_NAME"

# ---- smoke test: a claim gets provisioned and bound through the StorageClass -------------------
if [ "${SKIP_SMOKE:-}" != 1 ]; then
  cat > "$W/manifests/smoke.yaml" <<SM
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: up-smoke, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $STORAGE_CLASS
  resources: {requests: {storage: 1Mi}}
SM
  if [ "$VOLUME_BINDING_MODE" = WaitForFirstConsumer ]; then
    cat >> "$W/manifests/smoke.yaml" <<SM
---
apiVersion: v1
kind: Pod
metadata: {name: up-smoke, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: localhost/csi-e2e/busybox:1.35.0, command: [sh, -c, "echo ok > /data/ok"], volumeMounts: [{name: v, mountPath: /data}]}
  volumes: [{name: v, persistentVolumeClaim: {claimName: up-smoke}}]
SM
  fi
  $KUBECTL apply -f "$W/manifests/smoke.yaml" >> "$D_LOG/apply.log"
  bound() { [ "$($KUBECTL get pvc up-smoke -n default -o jsonpath='{.status.phase}')" = Bound ]; }
  wait_for 60 "smoke claim to bind" bound
  $KUBECTL delete -f "$W/manifests/smoke.yaml" --wait=false >> "$D_LOG/apply.log"
  log "StorageClass $STORAGE_CLASS provisions and binds claims"
fi

cat > "$W/env" <<EV
export KUBECONFIG=$W/admin.kubeconfig
export PATH=$BIN:\$PATH
APISERVER=https://127.0.0.1:$APISERVER_PORT
ADMIN_TOKEN=$ADMIN_TOKEN
NODE_NAME=$NODE_NAME
STORAGE_CLASS=$STORAGE_CLASS
DRIVER_NAME=$DRIVER_NAME
CONTAINERD_SOCK=$CTR_SOCK
NODE_NETNS=$NODE_NETNS
NODE_IP=$NODE_IP
EV
log "cluster up in $(elapsed)s"
echo "$W/admin.kubeconfig"
