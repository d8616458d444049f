// Making a YAML node say a value while keeping what a person wrote around it: the held pod
// template (claimstep.io/pod-template) replaces a set's spec.template in Git node by node, so a
// field that stays keeps its node and comments, an anchor that already says the value stays, and a
// field the server defaults is not written where Git leaves it unset (core/kube/pod-defaults.ts).

import YAML, { type Document, isMap, type YAMLMap } from "yaml";
import { compareQuantity, isServerDefault } from "../../core/kube/index.js";

export type Json = Record<string, unknown>;
export const isPlain = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** A field the held pod template has and Git leaves unset that the server would set the same anyway (core/kube/pod-defaults.ts): not written. */
function isDefault(key: string, value: unknown, parent: Json): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value) && value.length === 0) return true;
  return isServerDefault(key, value, parent);
}

/** `value` without the server's defaults, for a node written anew. */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (!isPlain(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (!isDefault(k, v, value)) out[k] = withoutDefaults(v);
  return out;
}

const keyOf = (pair: { key: unknown }): string => (YAML.isScalar(pair.key) ? String(pair.key.value) : String(pair.key));

const named = (items: readonly unknown[], name: (item: unknown) => unknown): boolean => {
  const names = items.map(name);
  return names.every((n) => typeof n === "string") && new Set(names).size === names.length;
};

function sameScalar(a: unknown, b: unknown, path: string): boolean {
  if (a === b) return true;
  const primitive = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  if (!primitive(a) || !primitive(b)) return false;
  if (String(a) === String(b)) return true;
  if (!/\.(requests|limits)\./.test(`.${path}`)) return false;
  try {
    return compareQuantity(String(a), String(b)) === 0; // `cpu: 0.5` is `500m`
  } catch {
    return false;
  }
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** A node written anew in place of `old`, keeping the comments around it. */
function replacement(doc: Document, old: unknown, value: unknown): unknown {
  const node = doc.createNode(withoutDefaults(value));
  if (YAML.isNode(old)) {
    if (old.commentBefore) node.commentBefore = old.commentBefore;
    if (old.comment) node.comment = old.comment;
    if (old.spaceBefore) node.spaceBefore = old.spaceBefore;
  }
  return node;
}

/**
 * Make `node` say `want`, editing in place wherever the structure allows (the nodes that stay keep
 * their comments): maps key by key, lists of named items (containers, volumes, mounts) by name,
 * other lists item by item when as long. Pushes the path of each change; returns the node to keep
 * in place of `node` (itself, or a replacement).
 */
export function reconcile(doc: Document, node: unknown, want: unknown, path: string, out: string[]): unknown {
  if (YAML.isAlias(node)) {
    // `*anchor`: kept when it already says `want` (the server's defaults aside), else written out.
    const probe = new YAML.Document(node.resolve(doc)?.toJSON() ?? null);
    const changed: string[] = [];
    reconcile(probe, probe.contents, want, path, changed);
    if (!changed.length) return node;
  }
  if (isPlain(want) && isMap(node)) {
    const map = node as YAMLMap<unknown, unknown>;
    for (const pair of [...map.items]) {
      const k = keyOf(pair);
      if (want[k] !== undefined && want[k] !== null) continue;
      map.items.splice(map.items.indexOf(pair), 1);
      out.push(join(path, k));
    }
    for (const [k, v] of Object.entries(want)) {
      if (v === undefined || v === null) continue;
      const pair = map.items.find((p) => keyOf(p) === k);
      if (pair) {
        const next = reconcile(doc, pair.value, v, join(path, k), out);
        if (next !== pair.value) pair.value = next;
      } else if (!isDefault(k, v, want)) {
        map.set(doc.createNode(k), doc.createNode(withoutDefaults(v)));
        out.push(join(path, k));
      }
    }
    return node;
  }
  if (Array.isArray(want) && YAML.isSeq(node)) {
    const nameOf = (i: unknown): unknown => (isMap(i) ? i.get("name") : isPlain(i) ? i.name : undefined);
    if (named(want, nameOf) && named(node.items, nameOf)) {
      const there = new Map(node.items.map((i) => [nameOf(i) as string, i]));
      const wanted = new Set(want.map((w) => nameOf(w) as string));
      for (const name of there.keys()) if (!wanted.has(name)) out.push(`${path}[${name}]`);
      const kept = [...there.keys()].filter((n) => wanted.has(n));
      const items = want.map((w) => {
        const name = nameOf(w) as string;
        const item = there.get(name);
        if (item === undefined) {
          out.push(`${path}[${name}]`);
          return doc.createNode(withoutDefaults(w));
        }
        return reconcile(doc, item, w, `${path}[${name}]`, out);
      });
      if (
        kept.join("\n") !==
        want
          .map(nameOf)
          .filter((n) => there.has(n as string))
          .join("\n")
      )
        out.push(path); // reordered
      node.items = items;
      return node;
    }
    if (want.length === node.items.length) {
      want.forEach((w, i) => {
        const next = reconcile(doc, node.items[i], w, `${path}[${i}]`, out);
        if (next !== node.items[i]) node.items[i] = next;
      });
      return node;
    }
  } else if (!isPlain(want) && !Array.isArray(want) && YAML.isScalar(node)) {
    if (sameScalar(node.value, want, path)) return node;
    out.push(path);
    if (typeof node.value === typeof want) {
      node.value = want;
      return node;
    }
    return replacement(doc, node, want);
  }
  out.push(path || "spec.template");
  return replacement(doc, node, want);
}
