// The revision hash of the desired claim templates (docs/design.md "Revision hash"): FNV-1 32 of a
// canonical JSON, encoded like Kubernetes' rand.SafeEncodeString, so `20Gi` and `21474836480`
// hash alike and key order never matters.
import { stableJSON } from "./json.js";
import type { ClaimTemplate } from "./k8s.js";
import { toBytes } from "./quantity.js";

const SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** 32-bit FNV-1 (multiply, then xor), as Kubernetes' HashControllerRevision. */
export function fnv1_32(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const b of bytes) {
    hash = Math.imul(hash, 0x01000193) >>> 0;
    hash = (hash ^ b) >>> 0;
  }
  return hash;
}

export function safeEncode(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

const sortedObject = (m: Record<string, string> | undefined): Record<string, string> | undefined => {
  if (!m || Object.keys(m).length === 0) return undefined;
  return Object.fromEntries(
    Object.keys(m)
      .sort()
      .map((k) => [k, m[k]!]),
  );
};

/** The fields claimstep applies, canonical: alphabetical keys, empty fields omitted. */
export function canonicalTemplate(t: ClaimTemplate): Record<string, unknown> {
  const storage = t.spec.resources?.requests?.storage;
  const out: Record<string, unknown> = {};
  const annotations = sortedObject(t.metadata.annotations);
  const labels = sortedObject(t.metadata.labels);
  if (annotations) out.annotations = annotations;
  if (labels) out.labels = labels;
  out.name = t.metadata.name;
  if (storage !== undefined) out.storageBytes = toBytes(storage).toString();
  if (t.spec.volumeAttributesClassName) out.volumeAttributesClassName = t.spec.volumeAttributesClassName;
  return out;
}

export function canonicalJSON(templates: readonly ClaimTemplate[]): string {
  const sorted = [...templates].sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
  return stableJSON(sorted.map(canonicalTemplate));
}

export function revisionOfCanonical(json: string): string {
  return safeEncode(String(fnv1_32(new TextEncoder().encode(json))));
}

/** Revision hash of desired templates. Throws QuantityError on a bad storage request. */
export function revisionOf(templates: readonly ClaimTemplate[]): string {
  return revisionOfCanonical(canonicalJSON(templates));
}
