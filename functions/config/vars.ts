// What the configuration's parsers (functions/config/*.ts, called by functions/config.ts) share.

/** Some of the environment's variables, by name; unset ones absent or undefined. */
export type Vars<K extends string> = Partial<Record<K, string | undefined>>;

/** What a parser found: its part of the configuration, and the problems (each naming the variable, never a value). */
export interface Parsed<C> {
  config: C;
  problems: string[];
}

/** Split a comma/space separated list, dropping empty entries. */
export const list = (raw: string | undefined): string[] =>
  (raw ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** A valid namespace name (an RFC 1123 label). */
export const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
