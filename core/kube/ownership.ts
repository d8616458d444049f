// Field ownership across the re-create (docs/design.md "Re-creating the set", F5). The re-create
// is a plain POST: every field of the new set is `claimstep/Update`'s, so a server-side apply of
// the unchanged manifest by Helm 4 or `kubectl apply --server-side` conflicts on the templates,
// and a field later dropped from Git stays (co-owned by claimstep) under Flux and Argo CD. F1
// records the old set's managedFields; F5 hands them back: every manager that owned a field before
// owns it after, and claimstep keeps only the annotations it writes itself.
import { FIELD_MANAGER, Keys } from "../keys.js";
import * as z from "../zod.js";

/** One `metadata.managedFields` entry, as the API server returns it (FieldsV1 kept as sent). */
export const ManagedFieldsEntry = z.looseObject({
  manager: z.string().check(z.minLength(1)),
  operation: z.enum(["Apply", "Update"]),
  apiVersion: z.optional(z.string()),
  time: z.optional(z.string()),
  fieldsType: z.optional(z.string()),
  fieldsV1: z.optional(z.record(z.string(), z.unknown())),
  subresource: z.optional(z.string()),
});
export type ManagedFieldsEntry = z.infer<typeof ManagedFieldsEntry>;
export const ManagedFields = z.array(ManagedFieldsEntry);

/**
 * The annotations claimstep writes for itself (its bookkeeping): the only fields its manager owns
 * once F5 ran. Not the user's asks (strategy, finalize, the desired templates): those stay with
 * whoever applied them.
 */
export const CLAIMSTEP_WRITES: readonly string[] = [
  Keys.status,
  Keys.updateRevision,
  Keys.currentRevision,
  Keys.userPartition,
  Keys.lastEviction,
  Keys.recreateRecord,
  Keys.recreateApproved,
  Keys.recreatedFrom,
  Keys.ownershipRestored,
  Keys.autogrownFrom,
];

const identity = (e: ManagedFieldsEntry): string => JSON.stringify([e.manager, e.operation, e.subresource ?? ""]);
const isClaimstep = (e: ManagedFieldsEntry): boolean => e.manager === FIELD_MANAGER && !e.subresource;

/**
 * The managedFields F5 writes on the re-created set: the old set's entries for the set itself
 * (`recorded`, but claimstep's), the new set's entries of its controllers (the status subresource)
 * and of anyone who wrote it since the create (joined with their recorded entry, if any), and one
 * entry of claimstep's owning only the bookkeeping annotations the set carries.
 */
export function restoredManagedFields(
  recorded: readonly ManagedFieldsEntry[],
  live: readonly ManagedFieldsEntry[],
  annotations: Readonly<Record<string, string>>,
): ManagedFieldsEntry[] {
  const since = live.filter((e) => !isClaimstep(e));
  const before = recorded.filter((e) => !e.subresource && !isClaimstep(e));
  // A manager that wrote the new set since its create and owned fields of the old one owns both.
  const merged = new Map<string, ManagedFieldsEntry>(before.map((e) => [identity(e), structuredClone(e)]));
  for (const e of since) {
    const earlier = merged.get(identity(e));
    merged.set(
      identity(e),
      earlier
        ? { ...structuredClone(e), fieldsV1: unionFields(earlier.fieldsV1 ?? {}, e.fieldsV1 ?? {}) }
        : structuredClone(e),
    );
  }
  const mine = CLAIMSTEP_WRITES.filter((k) => k in annotations).sort();
  const claimstep: ManagedFieldsEntry[] = mine.length
    ? [
        {
          manager: FIELD_MANAGER,
          operation: "Update",
          apiVersion: "apps/v1",
          ...timeOf(live),
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:annotations": Object.fromEntries(mine.map((k) => [`f:${k}`, {}])) } },
        },
      ]
    : [];
  return [...merged.values(), ...claimstep];
}

/** Both FieldsV1 trees in one: a field either owned is owned. */
function unionFields(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(a);
  for (const [k, v] of Object.entries(b)) {
    const x = out[k];
    out[k] = isTree(x) && isTree(v) ? unionFields(x, v) : structuredClone(v);
  }
  return out;
}
const isTree = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** claimstep's own entry keeps the time the API server gave it (core reads no clock). */
const timeOf = (live: readonly ManagedFieldsEntry[]): { time?: string } => {
  const time = live.find(isClaimstep)?.time;
  return time ? { time } : {};
};

/** Managers (with their operation) that owned fields of the set before, claimstep's aside: what F5 hands back. */
export const ownersOf = (recorded: readonly ManagedFieldsEntry[]): string[] =>
  recorded.filter((e) => !e.subresource && !isClaimstep(e)).map((e) => `${e.manager}/${e.operation}`);
