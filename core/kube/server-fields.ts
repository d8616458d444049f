// What the API server adds to a claim template that nobody wrote: its status, its server-set
// metadata, and the kind and apiVersion it serialises each template with. The one list of them,
// for every door that writes templates back (the desired-templates annotation of `set`, the
// templates route and the webhook; the added template a re-create creates; the manifest in Git).
import type { ClaimTemplate } from "./k8s.js";

/** Metadata only the server sets. */
const SERVER_SET_METADATA = ["creationTimestamp", "uid", "resourceVersion", "generation", "managedFields"] as const;

/** The template as written by a person: without status, server-set metadata, and the server's kind and apiVersion. */
export function withoutServerFields(t: ClaimTemplate): ClaimTemplate {
  const out = structuredClone(t) as ClaimTemplate & { status?: unknown; kind?: unknown; apiVersion?: unknown };
  delete out.status;
  if (out.kind === "PersistentVolumeClaim") delete out.kind;
  if (out.apiVersion === "v1") delete out.apiVersion;
  const metadata = out.metadata as Record<string, unknown>;
  for (const k of SERVER_SET_METADATA) delete metadata[k];
  return out;
}
