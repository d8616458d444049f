// The desired claim templates (rule 2): the annotation if present, else the live templates.
// Every way the annotation can be wrong (core/policy/annotations.ts templatesAnnotationOf) or a size can
// be wrong yields one precise message; nothing is written then.

import { Keys } from "../keys.js";
import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { MAX_STORAGE_BYTES, QuantityError, quantityString, toBytes } from "../kube/quantity.js";
import { templatesAnnotationOf } from "./annotations.js";

export type DesiredTemplates =
  | { ok: true; source: "annotation" | "spec"; templates: ClaimTemplate[] }
  | { ok: false; message: string };

const where = `annotation ${Keys.templates}`;

export function desiredTemplates(set: StatefulSet): DesiredTemplates {
  const annotation = templatesAnnotationOf(set);
  if (!annotation.ok) return annotation;
  const setName = `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;
  const source: "annotation" | "spec" = annotation.value ? "annotation" : "spec";
  const templates: ClaimTemplate[] = annotation.value ?? set.spec.volumeClaimTemplates ?? [];

  const out: ClaimTemplate[] = [];
  for (const t of templates) {
    const raw = t.spec.resources?.requests?.storage as string | number | undefined;
    const origin = source === "annotation" ? where : "spec.volumeClaimTemplates";
    if (raw === undefined) {
      return {
        ok: false,
        message: `${origin} on ${setName}: template "${t.metadata.name}" has no spec.resources.requests.storage`,
      };
    }
    try {
      // Rule 14: a JSON number is a quantity too (objects not parsed by the schemas may carry one).
      const storage = quantityString(raw);
      const bytes = toBytes(storage);
      if (bytes <= 0n) {
        return {
          ok: false,
          message: `${origin} on ${setName}: template "${t.metadata.name}" requests ${storage}; storage must be positive`,
        };
      }
      if (bytes > MAX_STORAGE_BYTES) {
        const fix =
          source === "annotation"
            ? `correct spec.resources.requests.storage of template "${t.metadata.name}" in ${where} (a unit typo? Ei where Ti or Gi was meant)`
            : `spec.volumeClaimTemplates cannot be changed: set ${where} with a smaller spec.resources.requests.storage for template "${t.metadata.name}"`;
        return {
          ok: false,
          message: `${origin} on ${setName}: template "${t.metadata.name}" requests ${storage} (${bytes} bytes), more than the largest volume a CSI driver can be asked for (${MAX_STORAGE_BYTES} bytes, 8Ei less one byte; 7Ei is the largest whole Ei). Claims never shrink, so a request this size could never be undone; nothing was written. Fix: ${fix}`,
        };
      }
      out.push(
        storage === raw
          ? t
          : {
              ...t,
              spec: {
                ...t.spec,
                resources: { ...t.spec.resources, requests: { ...t.spec.resources!.requests, storage } },
              },
            },
      );
    } catch (err) {
      if (err instanceof QuantityError) {
        return {
          ok: false,
          message: `${origin} on ${setName}: template "${t.metadata.name}" spec.resources.requests.storage: ${err.message}`,
        };
      }
      throw err;
    }
  }
  return { ok: true, source, templates: out };
}
