// StateReader over the simulated API server: the same five requests the direct adapter makes
// (GET the set, LIST pods and claims by the set's selector, LIST classes), each subject to faults.
import type { PersistentVolumeClaim, Pod, StatefulSet, StorageClass, VolumeAttributesClass } from "../../core/k8s.js";
import type { StateReader } from "../../core/ports.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { ApiError } from "../api-error.js";
import type { SimApi } from "./api.js";

export class SimStateReader implements StateReader {
  constructor(private readonly api: SimApi) {}

  // Objects come from the simulated API server, which only stores well-formed objects, so they
  // are used as the types they are rather than parsed again on every step.
  async load(ref: SetRef): Promise<Snapshot> {
    const statefulSet = (await this.api.get("statefulsets", ref.namespace, ref.name)) as unknown as StatefulSet;
    const labelSelector = statefulSet.spec.selector;
    const pods = (await this.api.list("pods", ref.namespace, { labelSelector })).items as unknown as Pod[];
    const claims = (await this.api.list("persistentvolumeclaims", ref.namespace, { labelSelector })).items as unknown as PersistentVolumeClaim[];
    const storageClasses = (await this.api.list("storageclasses")).items as unknown as StorageClass[];
    let volumeAttributesClasses: VolumeAttributesClass[] | undefined;
    try {
      volumeAttributesClasses = (await this.api.list("volumeattributesclasses")).items as unknown as VolumeAttributesClass[];
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    return { statefulSet, pods, claims, storageClasses, volumeAttributesClasses };
  }
}
