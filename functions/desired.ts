// The body formats of the templates route: the media types it reads and their parsing into a
// document. What a document means (core/change/desired.ts) is the core's.
import { parse as parseYaml } from "yaml";
import type { Issue } from "../core/change/index.js";

/** Media types the templates route reads. */
export const BodyFormats = {
  "application/json": "json",
  "application/yaml": "yaml",
  "application/x-yaml": "yaml",
  "text/yaml": "yaml",
} as const;
export type BodyFormat = (typeof BodyFormats)[keyof typeof BodyFormats];

export function parseDocument(
  text: string,
  format: BodyFormat,
): { ok: true; value: unknown } | { ok: false; issues: Issue[] } {
  try {
    return { ok: true, value: format === "json" ? JSON.parse(text) : parseYaml(text) };
  } catch (err) {
    return {
      ok: false,
      issues: [{ path: "(body)", message: `not valid ${format.toUpperCase()}: ${(err as Error).message}` }],
    };
  }
}
