// JSON values compared and written without regard to their keys' order: the one order-free
// comparison of the change doors (the webhook, `set`, the templates route, the GitOps edit), the
// planner's checks of a record against the set, and the digests. A key whose value is undefined is
// no key, as in JSON.

const entriesOf = (v: object): [string, unknown][] =>
  Object.entries(v).filter(([, x]) => x !== undefined) as [string, unknown][];

/** JSON with object keys sorted, so documents compare (and hash) by content, not by key order. */
export const stableJSON = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map((x) => (x === undefined ? "null" : stableJSON(x))).join(",")}]`
    : v && typeof v === "object"
      ? `{${entriesOf(v)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([k, x]) => `${JSON.stringify(k)}:${stableJSON(x)}`)
          .join(",")}}`
      : JSON.stringify(v);

/** JSON values equal whatever their keys' order (cheaper than comparing stableJSON's strings). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (Array.isArray(b)) return false;
  const ea = entriesOf(a);
  const rb = b as Record<string, unknown>;
  return ea.length === entriesOf(b).length && ea.every(([k, x]) => Object.hasOwn(b, k) && sameJson(x, rb[k]));
}

/** Whether `raw` (an annotation's text) is JSON equal to `value`: false when absent or not JSON. */
export function sameDocument(raw: string | undefined, value: unknown): boolean {
  if (raw === undefined) return false;
  try {
    return sameJson(JSON.parse(raw), value);
  } catch {
    return false;
  }
}
