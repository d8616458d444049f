// events.k8s.io/v1 Events on a StatefulSet, named deterministically from (set, reason, note) so
// a repeat of the same event finds the one already written and raises its series count.
import type { EventRecord, SetRef } from "../../core/types.js";

export const REPORTING_CONTROLLER = "claimstep.io/stepper";
const MAX_NOTE_BYTES = 1024; // the API server rejects longer notes
const MAX_NAME = 253;

/** MicroTime as the API server writes it: `2026-11-30T09:06:17.000000Z`. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** 64-bit FNV-1a of the UTF-8 bytes, as 16 hex digits. */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

/** The note cut to the API server's 1 KiB limit, on a character boundary. */
export function fitNote(note: string): string {
  const bytes = new TextEncoder().encode(note);
  if (bytes.length <= MAX_NOTE_BYTES) return note;
  let cut = note;
  while (new TextEncoder().encode(cut).length > MAX_NOTE_BYTES - 3) cut = cut.slice(0, Math.floor(cut.length * 0.95));
  return `${cut}...`;
}

/** `<set>-<hash of set, reason and note>`: a valid DNS subdomain, the same for the same event. */
export function eventName(ref: SetRef, event: Pick<EventRecord, "reason" | "note">): string {
  const hash = fnv1a64(`${ref.namespace}/${ref.name}\n${event.reason}\n${fitNote(event.note)}`);
  const prefix = ref.name.slice(0, MAX_NAME - hash.length - 1).replace(/[.-]+$/, "");
  return `${prefix}-${hash}`;
}

/** The Event to create for the first occurrence. */
export function eventBody(
  ref: SetRef,
  event: EventRecord,
  now: Date,
  reportingInstance: string,
): Record<string, unknown> {
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name: eventName(ref, event), namespace: ref.namespace },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance,
    action: event.action,
    reason: event.reason,
    type: event.type,
    note: fitNote(event.note),
    regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: ref.namespace, name: ref.name },
  };
}
