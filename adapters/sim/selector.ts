// Label selectors, as LIST ?labelSelector= and spec.selector evaluate them.
import type { LabelSelector } from "../../core/k8s.js";

type Requirement = { key: string; op: "In" | "NotIn" | "Exists" | "DoesNotExist"; values: string[] };

/** Parse the query-string form: `app=web`, `a!=b`, `tier in (db,cache)`, `!legacy`, `owner`. */
export function parseSelector(text: string): Requirement[] {
  const out: Requirement[] = [];
  // Split on commas outside parentheses.
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  for (const raw of parts.map((p) => p.trim()).filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(raw))) {
      out.push({ key: m[1]!, op: m[2] === "in" ? "In" : "NotIn", values: m[3]!.split(",").map((v) => v.trim()).filter(Boolean) });
    } else if ((m = /^([\w./-]+)\s*!=\s*([\w./-]*)$/.exec(raw))) {
      out.push({ key: m[1]!, op: "NotIn", values: [m[2]!] });
    } else if ((m = /^([\w./-]+)\s*==?\s*([\w./-]*)$/.exec(raw))) {
      out.push({ key: m[1]!, op: "In", values: [m[2]!] });
    } else if ((m = /^!([\w./-]+)$/.exec(raw))) {
      out.push({ key: m[1]!, op: "DoesNotExist", values: [] });
    } else if ((m = /^([\w./-]+)$/.exec(raw))) {
      out.push({ key: m[1]!, op: "Exists", values: [] });
    } else {
      throw new Error(`unable to parse requirement: ${JSON.stringify(raw)}`);
    }
  }
  return out;
}

function requirementsOf(selector: LabelSelector | string): Requirement[] {
  if (typeof selector === "string") return parseSelector(selector);
  return [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, v]): Requirement => ({ key, op: "In", values: [v] })),
    ...(selector.matchExpressions ?? []).map((e): Requirement => ({ key: e.key, op: e.operator, values: e.values ?? [] })),
  ];
}

export function matches(selector: LabelSelector | string, labels: Record<string, string> | undefined): boolean {
  return requirementsOf(selector).every((r) => {
    const v = labels?.[r.key];
    switch (r.op) {
      case "In":
        return v !== undefined && r.values.includes(v);
      case "NotIn":
        return v === undefined || !r.values.includes(v);
      case "Exists":
        return v !== undefined;
      case "DoesNotExist":
        return v === undefined;
    }
  });
}
