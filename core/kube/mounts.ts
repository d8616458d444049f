// The volumes a pod template mounts that its set does not give it: the API server refuses such a
// set (422 volumeMounts[0].name: Not found). The one check of it, for the planner's shape
// (core/plan/reshape.ts, I14) and the GitOps manifest edit (adapters/gitops/set-manifest.ts). Read
// leniently: what is not a list of named items gives nothing and lacks nothing.

/** One mount (or device) of a volume neither the pod template's volumes nor the claim templates give. */
export interface MountWithoutVolume {
  container: string;
  volume: string;
}

type Json = Record<string, unknown>;
const isPlain = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const nameOf = (v: unknown): unknown => (isPlain(v) ? v.name : undefined);

/** Every mount and device of `podTemplate`'s containers (init containers first) whose volume is neither in its volumes nor in `templateNames`. */
export function mountsWithoutVolume(podTemplate: unknown, templateNames: readonly string[]): MountWithoutVolume[] {
  const spec = isPlain(podTemplate) && isPlain(podTemplate.spec) ? podTemplate.spec : {};
  const volumes = new Set([...listOf(spec.volumes).map(nameOf), ...templateNames]);
  const out: MountWithoutVolume[] = [];
  for (const c of [...listOf(spec.initContainers), ...listOf(spec.containers)]) {
    if (!isPlain(c)) continue;
    for (const m of [...listOf(c.volumeMounts), ...listOf(c.volumeDevices)]) {
      const volume = nameOf(m);
      if (typeof volume === "string" && !volumes.has(volume)) out.push({ container: String(c.name), volume });
    }
  }
  return out;
}
