// The captured API server responses (test/fixtures/apiserver/README.md): bodies and codes, read as they are.
import { fixtureStatus } from "../fixtures/apiserver.js";

export type FixtureName =
  | "event-create-invalid-generatename"
  | "event-create"
  | "forbidden"
  | "lease-create-1"
  | "lease-create-2"
  | "pod-delete-uid-mismatch"
  | "pod-list"
  | "pvc-apply-conflict"
  | "pvc-apply-ok"
  | "pvc-change-class"
  | "pvc-expand-not-allowed"
  | "pvc-expand-unbound"
  | "pvc-list"
  | "pvc-patch-stale-rv"
  | "pvc-shrink"
  | "statefulset-not-found"
  | "statefulset-web"
  | "storageclass-list"
  | "sts-delete-orphan"
  | "sts-vct-update"
  | "unauthorized";

/** A fixture's body (parsed JSON) and HTTP code: the last line when it is one (all `.txt` files, and `event-create.json`), else 200. */
export function fixture(name: FixtureName): { body: any; code: number } {
  const { body, code } = fixtureStatus(TXT.has(name) ? `${name}.txt` : `${name}.json`);
  return { body, code };
}

const TXT = new Set<FixtureName>([
  "event-create-invalid-generatename",
  "forbidden",
  "lease-create-1",
  "lease-create-2",
  "pod-delete-uid-mismatch",
  "pvc-apply-conflict",
  "pvc-change-class",
  "pvc-expand-not-allowed",
  "pvc-expand-unbound",
  "pvc-patch-stale-rv",
  "pvc-shrink",
  "statefulset-not-found",
  "sts-vct-update",
  "unauthorized",
]);
