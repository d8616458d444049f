// A LabelSelector ({matchLabels, matchExpressions}) as the `labelSelector` query string the API
// server parses: `app=web,tier in (db,cache),!canary`. Keys and values of a selector the API
// server accepted need no escaping in this syntax; URLSearchParams percent-encodes the result.
import type { LabelSelector } from "../../core/k8s.js";

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
          throw new LabelSelectorError(`selector expression on "${req.key}": operator ${req.operator} needs at least one value`);
        }
        parts.push(`${req.key} ${req.operator.toLowerCase()} (${values.join(",")})`);
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length) {
          throw new LabelSelectorError(`selector expression on "${req.key}": operator ${req.operator} takes no values (got ${values.join(",")})`);
        }
        parts.push(req.operator === "Exists" ? req.key : `!${req.key}`);
        break;
    }
  }
  return parts.join(",");
}
