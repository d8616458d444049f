// The captured API server responses (fixtures/README.md): bodies and codes, read as they are.
import { readFileSync } from "node:fs";

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

/** A fixture's body (parsed JSON) and HTTP code (`.json` files are 200, or 201 for a create). */
export function fixture(name: FixtureName): { body: any; code: number } {
  if (TXT.has(name)) {
    const text = readFileSync(new URL(`./fixtures/${name}.txt`, import.meta.url), "utf8").trimEnd();
    const cut = text.lastIndexOf("\n");
    return { body: JSON.parse(text.slice(0, cut)), code: Number(text.slice(cut + 1)) };
  }
  const body = JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8"));
  return { body, code: name === "event-create" ? 201 : 200 };
}
