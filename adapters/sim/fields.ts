// Field ownership for server-side apply (structured-merge-diff, reduced to what PVCs, sets and
// pods carry): who owns which leaf, conflicts of a non-forced apply, removal of fields an applier
// stopped sending, and the `managedFields` entries the API server shows.
import type { ManagerRef } from "./errors.js";

/** A leaf path: `["spec","resources","requests","storage"]`. Lists are atomic leaves. */
export type Path = readonly string[];
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export const pathKey = (p: Path): string => JSON.stringify(p);
const fromKey = (k: string): Path => JSON.parse(k) as Path;

/** `.spec.resources.requests.storage`, as conflicts print a path. */
export const printPath = (p: Path): string => p.map((s) => `.${s}`).join("");

/** Top-level parts of an object that field managers own (`data`, `binaryData`: a ConfigMap's). */
const OWNED_ROOTS = {
  main: [
    "metadata",
    "spec",
    "data",
    "binaryData",
    "action",
    "eventTime",
    "note",
    "reason",
    "regarding",
    "related",
    "reportingController",
    "reportingInstance",
    "series",
    "type",
  ],
  status: ["status"],
} as const;
/**
 * Top-level fields that are leaves themselves: an events.k8s.io/v1 Event's scalars, and its
 * object references, which are atomic (`f:regarding: {}`, as the v1.34 server shows them).
 */
/** Atomic structs (metav1.LabelSelector is `+structType=atomic`): owned whole, `f:selector: {}`. */
const ATOMIC = new Set(["selector"]);
const TOP_LEVEL_LEAVES = new Set([
  "action",
  "eventTime",
  "note",
  "reason",
  "regarding",
  "related",
  "reportingController",
  "reportingInstance",
  "type",
]);
const IDENTITY = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "generateName",
  "deletionTimestamp",
]);

/** Leaf paths an object (or an apply configuration) sets. */
export function leaves(obj: Json, part: keyof typeof OWNED_ROOTS = "main"): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (
      (path.length === 1 && TOP_LEVEL_LEAVES.has(path[0]!)) ||
      (path.length > 1 && ATOMIC.has(path[path.length - 1]!) && isObject(v))
    ) {
      if (v !== null && v !== undefined) out.push(path);
      return;
    }
    if (isObject(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) {
        if (path.length === 1 && path[0] === "metadata" && IDENTITY.has(k)) continue;
        if (x === undefined) continue;
        walk(x, [...path, k]);
      }
    } else if (path.length > 1 && v !== null && v !== undefined) {
      out.push(path);
    }
  };
  for (const root of OWNED_ROOTS[part]) walk(obj[root], [root]);
  return out;
}

/**
 * Structs every object of the kind has (Go non-pointer fields: present, if empty, before any
 * write): never "created" by an update, so never owned as a node.
 */
const ALWAYS_PRESENT = new Set(["metadata", "spec", "status", "template", "updateStrategy", "resources"]);

/** Non-empty maps and optional structs present in `after` and absent in `before` (paths below a root). */
function createdNodes(after: Json, before: Json | undefined, part: keyof typeof OWNED_ROOTS): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: string[]) => {
    if (!isObject(v) || Object.keys(v).length === 0) return;
    if (path.length === 1 && TOP_LEVEL_LEAVES.has(path[0]!)) return;
    if (path.length > 1 && ATOMIC.has(path[path.length - 1]!)) return;
    if (path.length === 2 && path[0] === "metadata" && IDENTITY.has(path[1]!)) return;
    if (!ALWAYS_PRESENT.has(path[path.length - 1]!) && !isObject(before ? getPath(before, path) : undefined))
      out.push(path);
    for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  for (const root of OWNED_ROOTS[part]) walk(after[root], [root]);
  return out;
}

export function getPath(obj: Json, p: Path): unknown {
  let v: unknown = obj;
  for (const s of p) {
    if (!isObject(v)) return undefined;
    v = v[s];
  }
  return v;
}

export function setPath(obj: Json, p: Path, value: unknown): void {
  let v: Json = obj;
  for (const s of p.slice(0, -1)) {
    if (!isObject(v[s])) v[s] = {};
    v = v[s] as Json;
  }
  v[p[p.length - 1]!] = structuredClone(value);
}

/** Delete a leaf and the maps it leaves empty. */
export function deletePath(obj: Json, p: Path): void {
  const parents: Json[] = [];
  let v: Json = obj;
  for (const s of p.slice(0, -1)) {
    if (!isObject(v[s])) return;
    parents.push(v);
    v = v[s] as Json;
  }
  delete v[p[p.length - 1]!];
  for (let i = p.length - 2; i >= 0; i--) {
    const child = getPath(obj, p.slice(0, i + 1));
    if (isObject(child) && Object.keys(child).length === 0) delete parents[i]![p[i]!];
    else break;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export interface ManagerEntry extends ManagerRef {
  time: string;
  fields: Set<string>;
}

const sameManager = (a: ManagerRef, b: ManagerRef) =>
  a.manager === b.manager && a.operation === b.operation && (a.subresource ?? "") === (b.subresource ?? "");

/** One manager's entry as the simulation saves it: its leaves as paths, in the order it took them. */
export interface ManagerState extends ManagerRef {
  time: string;
  fields: string[][];
}

/** The ownership table of one object. */
export class FieldOwners {
  entries: ManagerEntry[] = [];

  clone(): FieldOwners {
    const c = new FieldOwners();
    c.entries = this.entries.map((e) => ({ ...e, fields: new Set(e.fields) }));
    return c;
  }

  private entry(ref: ManagerRef, time: string): ManagerEntry {
    let e = this.entries.find((x) => sameManager(x, ref));
    if (!e) {
      e = { ...ref, time, fields: new Set() };
      this.entries.push(e);
    }
    e.time = time;
    return e;
  }

  private prune(): void {
    this.entries = this.entries.filter((e) => e.fields.size > 0);
  }

  ownedByOthers(ref: ManagerRef, key: string): boolean {
    return this.entries.some((e) => !sameManager(e, ref) && e.fields.has(key));
  }

  /** An Update (create, merge patch, controller write): the writer takes every leaf it changed. */
  recordUpdate(ref: ManagerRef, before: Json | undefined, after: Json, time: string): void {
    const part = ref.subresource === "status" ? "status" : "main";
    const keys = new Set<string>();
    for (const p of leaves(after, part))
      if (!before || !same(getPath(before, p), getPath(after, p))) keys.add(pathKey(p));
    // A map or optional struct the update brought into being is the writer's too (FieldsV1 `".": {}`).
    for (const p of createdNodes(after, before, part)) keys.add(pathKey(p));
    const removed = before
      ? leaves(before, part)
          .filter((p) => getPath(after, p) === undefined)
          .map(pathKey)
      : [];
    if (keys.size === 0 && removed.length === 0) return;
    for (const e of this.entries) for (const k of [...keys, ...removed]) e.fields.delete(k);
    const mine = this.entry(ref, time);
    for (const k of keys) mine.fields.add(k);
    this.prune();
  }

  /**
   * Server-side apply of `config` by `ref` onto `live`: the merged object, or the conflicts of a
   * non-forced apply (fields other managers own with a different value).
   */
  apply(
    ref: ManagerRef,
    live: Json,
    config: Json,
    force: boolean,
    time: string,
  ): { merged: Json; conflicts: { manager: ManagerRef; field: string }[] } {
    const configLeaves = leaves(config);
    const configKeys = new Set(configLeaves.map(pathKey));
    const conflicts: { manager: ManagerRef; field: string; entry: ManagerEntry; key: string }[] = [];
    for (const p of configLeaves) {
      if (same(getPath(live, p), getPath(config, p))) continue;
      const key = pathKey(p);
      for (const e of this.entries) {
        if (!sameManager(e, ref) && !e.subresource && e.fields.has(key)) {
          conflicts.push({
            manager: { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion },
            field: printPath(p),
            entry: e,
            key,
          });
        }
      }
    }
    if (conflicts.length && !force)
      return { merged: live, conflicts: conflicts.map(({ manager, field }) => ({ manager, field })) };
    for (const c of conflicts) c.entry.fields.delete(c.key);

    const merged = structuredClone(live);
    const mine = this.entry(ref, time);
    // Fields this applier set before and no longer sends are removed, unless someone else owns them.
    for (const key of mine.fields) {
      if (!configKeys.has(key) && !this.ownedByOthers(ref, key)) deletePath(merged, fromKey(key));
    }
    for (const p of configLeaves) setPath(merged, p, getPath(config, p));
    mine.fields = configKeys;
    this.prune();
    return { merged, conflicts: [] };
  }

  /** The table exactly (unlike `render`, which merges paths into FieldsV1), to save the simulation. */
  state(): ManagerState[] {
    return this.entries.map((e) => ({ ...e, fields: [...e.fields].map((k) => [...fromKey(k)]) }));
  }

  static fromState(entries: ManagerState[]): FieldOwners {
    const owners = new FieldOwners();
    owners.entries = entries.map(({ fields, ...ref }) => ({ ...ref, fields: new Set(fields.map(pathKey)) }));
    return owners;
  }

  /** The ownership table an object's `metadata.managedFields` describe (an object seeded as captured). */
  static fromManagedFields(entries: unknown): FieldOwners {
    const owners = new FieldOwners();
    if (!Array.isArray(entries)) return owners;
    for (const e of entries as Json[]) {
      if (typeof e.manager !== "string") continue;
      const fields = new Set<string>();
      // FieldsV1: `f:<name>` maps; a node with no `f:` children (or a list's `k:`/`v:` items) is a leaf here.
      const walk = (node: unknown, path: string[]) => {
        const children = isObject(node) ? Object.keys(node).filter((k) => k.startsWith("f:")) : [];
        if (!children.length) {
          if (path.length > 1) fields.add(pathKey(path));
          return;
        }
        for (const k of children) walk((node as Json)[k], [...path, k.slice(2)]);
      };
      walk(e.fieldsV1, []);
      owners.entries.push({
        manager: e.manager,
        operation: e.operation === "Apply" ? "Apply" : "Update",
        apiVersion: typeof e.apiVersion === "string" ? e.apiVersion : "v1",
        ...(typeof e.subresource === "string" ? { subresource: e.subresource } : {}),
        time: typeof e.time === "string" ? e.time : "",
        fields,
      });
    }
    owners.prune();
    return owners;
  }

  /** `metadata.managedFields` as the API server returns it (FieldsV1). */
  render(apiVersion: string): Json[] {
    return this.entries.map((e) => {
      const fieldsV1: Json = {};
      const members: Json[] = [];
      for (const key of [...e.fields].sort()) {
        let node = fieldsV1;
        for (const s of fromKey(key)) {
          const k = `f:${s}`;
          if (!isObject(node[k])) node[k] = {};
          node = node[k] as Json;
        }
        members.push(node);
      }
      // A node owned itself and with owned children: `".": {}` first.
      for (const node of members) {
        if (Object.keys(node).length === 0 || "." in node) continue;
        const children = { ...node };
        for (const k of Object.keys(node)) delete node[k];
        Object.assign(node, { ".": {} }, children);
      }
      return {
        manager: e.manager,
        operation: e.operation,
        apiVersion: e.apiVersion || apiVersion,
        time: e.time,
        fieldsType: "FieldsV1",
        fieldsV1,
        ...(e.subresource ? { subresource: e.subresource } : {}),
      };
    });
  }
}
