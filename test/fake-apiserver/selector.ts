// The API server's side of `labelSelector`: parse the string, match labels. Grammar (as
// k8s.io/apimachinery/pkg/labels): requirements separated by commas, each one of
// `k`, `!k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`.

export type Requirement =
  | { key: string; op: "exists" | "!exists" }
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: string[] };

export class SelectorSyntaxError extends Error {}

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
  if (!KEY.test(k)) throw new SelectorSyntaxError(`unable to parse requirement: invalid label key "${k}" in "${whole}"`);
  return k;
};
const value = (v: string, whole: string): string => {
  if (!VALUE.test(v)) throw new SelectorSyntaxError(`unable to parse requirement: invalid label value "${v}" in "${whole}"`);
  return v;
};

export function parseSelector(selector: string): Requirement[] {
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

export function matches(requirements: Requirement[], labels: Record<string, string> | undefined): boolean {
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
