// What the API server writes into a StatefulSet's pod template where a field is unset
// (SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_ContainerPort, the probe, volume and
// fieldRef defaults; seen in a real v1.34 admission review,
// test/fixtures/apiserver/admission-review-sts-update-vct-1.34.json). The one table of them: the
// simulated API server applies them (adapters/sim/defaults.ts) and the GitOps edit leaves them out
// of Git (adapters/gitops/set-manifest.ts). Each table in the order the server sets its fields.

/** The pod spec's (`resources`-like `{}` values are the empty maps the server adds). */
export const POD_SPEC_DEFAULTS = {
  restartPolicy: "Always",
  terminationGracePeriodSeconds: 30,
  dnsPolicy: "ClusterFirst",
  securityContext: {},
  schedulerName: "default-scheduler",
} as const;

/** Each container's and init container's, after its imagePullPolicy (pullPolicyFor). */
export const CONTAINER_DEFAULTS = {
  resources: {},
  terminationMessagePath: "/dev/termination-log",
  terminationMessagePolicy: "File",
} as const;

/** Each container port's. */
export const PORT_DEFAULTS = { protocol: "TCP" } as const;

/** Elsewhere in a pod template: probes (and their httpGet scheme), volume sources, fieldRefs. */
const OTHER_DEFAULTS = {
  scheme: "HTTP",
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
  defaultMode: 420,
  apiVersion: "v1",
} as const;

/** The image pull policy the server defaults for an image: Always for `:latest` or no tag, else IfNotPresent (a digest included). */
export function pullPolicyFor(image: string): "Always" | "IfNotPresent" {
  if (image.includes("@")) return "IfNotPresent";
  const lastSlash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon <= lastSlash || image.slice(colon + 1) === "latest" ? "Always" : "IfNotPresent";
}

const VALUES = new Map<string, unknown[]>();
for (const table of [POD_SPEC_DEFAULTS, CONTAINER_DEFAULTS, PORT_DEFAULTS, OTHER_DEFAULTS])
  for (const [k, v] of Object.entries(table)) VALUES.set(k, [...(VALUES.get(k) ?? []), v]);

/**
 * Whether `value` at `key` (in the object `parent`) is what the server would set there anyway: a
 * default value, an empty map where the server adds one (`resources: {}`; an empty volume source
 * such as `emptyDir: {}` says something), the image's pull policy.
 */
export function isServerDefault(key: string, value: unknown, parent: Record<string, unknown>): boolean {
  if (key === "imagePullPolicy") return typeof parent.image === "string" && value === pullPolicyFor(parent.image);
  const empty = value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;
  return (
    VALUES.get(key)?.some((d) =>
      empty ? d !== null && typeof d === "object" && Object.keys(d).length === 0 : d === value,
    ) ?? false
  );
}
