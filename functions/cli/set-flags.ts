// The flags of `set` checked before anything is written: --storage a size a claim can request, the
// flags only --add takes, --vac a class the cluster has.
import { isUnitless, parseQuantity } from "../../core/kube/index.js";
import type { Snapshot } from "../../core/types.js";

/** Below this a unitless --storage (bytes) is refused as a missing unit: 1Mi, in nano-units (parseQuantity's). */
const UNITLESS_BYTES_FLOOR = 1_048_576n * 1_000_000_000n;

/**
 * Why `--storage` is no size a claim can request, naming the flag (not the annotation it is
 * written to): not a quantity (with the units meant, for `10Gb`), zero or negative, or a bare
 * number below 1Mi (`7`, `1.5`: bytes, surely meant as Gi).
 */
export function storageFlagProblem(storage: string): string | undefined {
  const flag = `--storage ${JSON.stringify(storage)}`;
  let value: bigint;
  try {
    value = parseQuantity(storage);
  } catch {
    // 10Gb, 10GB, 10gib, 10GiB: the unit of bytes written as people write it.
    const unit = /^\s*(\d+(?:\.\d+)?)\s*([kmgtpe])(i?)b?\s*$/i.exec(storage);
    if (unit) {
      const [, n, u] = unit;
      const decimal = u!.toLowerCase() === "k" ? "k" : u!.toUpperCase();
      return `${flag}: not a Kubernetes quantity; did you mean ${n}${decimal} or ${n}${u!.toUpperCase()}i?`;
    }
    return `${flag}: not a Kubernetes quantity (examples: 20Gi, 500M, 1.5Ti).`;
  }
  if (value < 0n) return `${flag}: a claim's size cannot be negative; give a size such as 20Gi.`;
  if (value === 0n) return `${flag}: a claim's size must be above zero; give a size such as 20Gi.`;
  // `--storage 7`, `--storage 1.5`: a number without a unit is bytes; no claim is meant that small.
  if (isUnitless(storage) && value < UNITLESS_BYTES_FLOOR)
    return `${flag}: a number without a unit is bytes (${storage.trim()} bytes); did you mean ${storage.trim()}Gi?`;
  return undefined;
}

/** Flags only `--add` takes. */
export const ADD_ONLY = ["storage-class", "access-mode", "mount-path", "container"] as const;

/** Why `vac` cannot be used on this cluster, or undefined. */
export function missingClass(snapshot: Snapshot, vac: string): string | undefined {
  const classes = snapshot.volumeAttributesClasses;
  if (classes === undefined)
    return `set: --vac ${vac}: this cluster serves no VolumeAttributesClass API (storage.k8s.io); nothing written`;
  if (classes.some((c) => c.metadata.name === vac)) return undefined;
  const names = classes.map((c) => c.metadata.name).sort();
  return `set: VolumeAttributesClass "${vac}" not found (the cluster has: ${names.join(", ") || "none"}); nothing written`;
}
