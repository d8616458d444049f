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

/** A fixture's body (parsed JSON) and HTTP code: the last line when it is one (all `.txt` files, and `event-create.json`), else 200. */
export function fixture(name: FixtureName): { body: any; code: number } {
  const file = TXT.has(name) ? `${name}.txt` : `${name}.json`;
  const text = readFileSync(new URL(`./fixtures/${file}`, import.meta.url), "utf8").trimEnd();
  const cut = text.lastIndexOf("\n");
  const last = text.slice(cut + 1).trim();
  if (/^\d{3}$/.test(last)) return { body: JSON.parse(text.slice(0, cut)), code: Number(last) };
  return { body: JSON.parse(text), code: 200 };
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
