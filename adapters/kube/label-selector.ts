// Label selectors in the `labelSelector` query syntax (`app=web,tier in (db,cache),!canary`):
// encoding a LabelSelector ({matchLabels, matchExpressions}) as the client sends it, and parsing
// and matching it as the API server does (k8s.io/apimachinery/pkg/labels), for the simulated
// cluster and the fake API server. Keys and values of a selector the API server accepted need no
// escaping in this syntax; URLSearchParams percent-encodes the result.
import type { LabelSelector } from "../../core/kube/index.js";

export class LabelSelectorError extends Error {
  override readonly name = "LabelSelectorError";
}

export function encodeLabelSelector(selector: LabelSelector): string {
  const parts: string[] = [];
  for (const key of Object.keys(selector.matchLabels ?? {}).sort()) {
    parts.push(`${key}=${selector.matchLabels![key]}`);
  }
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort();
    switch (req.operator) {
      case "In":
      case "NotIn":
        if (!values.length) {
          throw new LabelSelectorError(
            `selector expression on "${req.key}": operator ${req.operator} needs at least one value`,
          );
        }
        parts.push(`${req.key} ${req.operator.toLowerCase()} (${values.join(",")})`);
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length) {
          throw new LabelSelectorError(
            `selector expression on "${req.key}": operator ${req.operator} takes no values (got ${values.join(",")})`,
          );
        }
        parts.push(req.operator === "Exists" ? req.key : `!${req.key}`);
        break;
    }
  }
  return parts.join(",");
}

export type Requirement =
  | { key: string; op: "exists" | "!exists" }
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: string[] };

export class SelectorSyntaxError extends Error {
  override readonly name = "SelectorSyntaxError";
}

/** Split on commas outside parentheses. */
const splitTop = (s: string): string[] => {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
};

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_./]*[a-z0-9A-Z])?)$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const key = (k: string, whole: string): string => {
  if (!KEY.test(k))
    throw new SelectorSyntaxError(`unable to parse requirement: invalid label key "${k}" in "${whole}"`);
  return k;
};
const value = (v: string, whole: string): string => {
  if (!VALUE.test(v))
    throw new SelectorSyntaxError(`unable to parse requirement: invalid label value "${v}" in "${whole}"`);
  return v;
};

/** Parse the `labelSelector` query form as the API server does (`SelectorSyntaxError` on bad input). */
export function parseLabelSelector(selector: string): Requirement[] {
  if (!selector.trim()) return [];
  return splitTop(selector).map((raw) => {
    const r = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^!\s*(\S+)$/.exec(r))) return { key: key(m[1]!, r), op: "!exists" };
    if ((m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(r))) {
      const values = m[3]!.split(",").map((v) => value(v.trim(), r));
      return { key: key(m[1]!, r), op: m[2] as "in" | "notin", values };
    }
    if ((m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(r))) {
      return { key: key(m[1]!, r), op: m[2] === "!=" ? "!=" : "=", value: value(m[3]!, r) };
    }
    if (/^\S+$/.test(r)) return { key: key(r, r), op: "exists" };
    throw new SelectorSyntaxError(`unable to parse requirement: "${r}"`);
  });
}

/** Do these labels satisfy every requirement? */
export function matchesLabels(
  requirements: readonly Requirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  return requirements.every((req) => {
    const has = Object.hasOwn(l, req.key);
    switch (req.op) {
      case "exists":
        return has;
      case "!exists":
        return !has;
      case "=":
        return has && l[req.key] === req.value;
      case "!=":
        return !has || l[req.key] !== req.value;
      case "in":
        return has && req.values.includes(l[req.key]!);
      case "notin":
        return !has || !req.values.includes(l[req.key]!);
    }
  });
}
