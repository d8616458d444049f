// The diff the API server prints when a PVC's immutable spec changes: go-cmp's report of the
// internal core.PersistentVolumeClaimSpec (fixtures pvc-change-class.txt, pvc-expand-unbound.txt).
// Only what PVC specs contain is rendered; equal runs are elided with two records of context.
// go-cmp marks lines with a non-breaking space ("\u00a0\u00a0", "-\u00a0", "+\u00a0") so that nobody
// parses its output; the captured responses have them, so this has them too.
import type { PersistentVolumeClaimSpec } from "../../core/kube/index.js";
import { formatBytes, toBytes } from "../../core/kube/index.js";

/**
 * Which API server's diff to print: v1.24 (the fixtures: go-cmp's report), or a current one with
 * VolumeAttributesClass (v1.34: a unified diff of the spec as indented JSON, what
 * test/e2e/conformance.test.ts finds the real server answering).
 */
export type SpecProfile = "v1.24" | "vac";

type Spec = PersistentVolumeClaimSpec;

interface Field {
  name: string;
  get: (s: Spec) => unknown;
  /** One-line form inside an equal record (go-cmp limits depth there). */
  short: (v: unknown) => string;
  /** Multi-line diff of a nested struct, if the field is one. */
  nested?: (a: unknown, b: unknown) => string[];
}

const quote = (s: string) => JSON.stringify(s);
const ptr = (v: unknown) => (v === undefined || v === null ? "nil" : `&${quote(String(v))}`);

const DECIMAL = ["E", "P", "T", "G", "M", "k"] as const;
const DECIMAL_EXP: Record<string, number> = { k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

interface QuantityParts {
  value: string;
  scale: number;
  format: "BinarySI" | "DecimalSI" | "DecimalExponent";
  canonical?: string;
}

/** resource.Quantity's internal parts as go-cmp shows them. */
function quantityParts(s: string): QuantityParts {
  const m = /^(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE]|[eE][+-]?\d+)?$/.exec(s);
  if (!m) return { value: "0", scale: 0, format: "DecimalSI" };
  const [, int = "", frac = "", suffix = ""] = m;
  if (/i$/.test(suffix)) {
    const bytes = toBytes(s);
    return {
      value: bytes.toString(),
      scale: 0,
      format: "BinarySI",
      ...(formatBytes(bytes) === s ? { canonical: s } : {}),
    };
  }
  const exp = suffix.startsWith("e") || suffix.startsWith("E") ? Number(suffix.slice(1)) : (DECIMAL_EXP[suffix] ?? 0);
  const digits = (int + frac).replace(/^0+(?=\d)/, "");
  const format = suffix.startsWith("e") || suffix.startsWith("E") ? "DecimalExponent" : "DecimalSI";
  let canonical: string | undefined;
  if (format === "DecimalSI" && !frac) {
    const bytes = toBytes(s);
    const unit = DECIMAL.find((u) => bytes !== 0n && bytes % 10n ** BigInt(DECIMAL_EXP[u]!) === 0n);
    canonical = unit ? `${bytes / 10n ** BigInt(DECIMAL_EXP[unit]!)}${unit}` : bytes.toString();
    if (canonical !== s) canonical = undefined;
  }
  return { value: digits || "0", scale: exp - frac.length, format, ...(canonical ? { canonical } : {}) };
}

const quantity = (s: string, deep: boolean): string => {
  const q = quantityParts(s);
  const amount = deep ? `resource.int64Amount{value: ${q.value}${q.scale ? `, scale: ${q.scale}` : ""}}` : "{...}";
  return `{i: ${amount}${q.canonical ? `, s: ${quote(q.canonical)}` : ""}, Format: ${quote(q.format)}}`;
};

const resourceList = (m: Record<string, string> | undefined, deep: boolean): string =>
  m === undefined
    ? "nil"
    : `{${Object.keys(m)
        .sort()
        .map((k) => `s${quote(k)}: ${quantity(m[k]!, deep)}`)
        .join(", ")}}`;

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;

const resourcesShort = (v: unknown): string => {
  const r = v as Resources;
  const parts = [
    ...(r?.limits ? [`Limits: ${resourceList(r.limits, false)}`] : []),
    ...(r?.requests ? [`Requests: ${resourceList(r.requests, false)}`] : []),
  ];
  return `{${parts.join(", ")}}`;
};

/** A ResourceList that differs: the whole list removed then added, one entry per line. */
const NBSP = "\u00a0";
/** The two-character prefix of a diff line. */
const prefix = (mark: " " | "-" | "+") => `${mark === " " ? NBSP : mark}${NBSP}`;

const listLines = (mark: "-" | "+", name: string, m: Record<string, string> | undefined): string[] =>
  m === undefined
    ? [`${prefix(mark)}\t\t${name}: nil,`]
    : [
        `${prefix(mark)}\t\t${name}: core.ResourceList{`,
        ...Object.keys(m)
          .sort()
          .map((k) => `${prefix(mark)}\t\t\ts${quote(k)}: ${quantity(m[k]!, true)},`),
        `${prefix(mark)}\t\t},`,
      ];

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const resourcesNested =
  (typeName: string) =>
  (a: unknown, b: unknown): string[] => {
    const x = a as Resources;
    const y = b as Resources;
    const lines = [`${prefix(" ")}\tResources: ${typeName}{`];
    for (const [name, key] of [
      ["Limits", "limits"],
      ["Requests", "requests"],
    ] as const) {
      if (sameJSON(x?.[key], y?.[key])) lines.push(`${prefix(" ")}\t\t${name}: ${resourceList(x?.[key], false)},`);
      else lines.push(...listLines("-", name, x?.[key]), ...listLines("+", name, y?.[key]));
    }
    lines.push(`${prefix(" ")}\t},`);
    return lines;
  };

const stringList = (v: unknown) =>
  Array.isArray(v) && v.length ? `{${v.map((s) => quote(String(s))).join(", ")}}` : "nil";
const objectRef = (v: unknown) =>
  v === undefined || v === null
    ? "nil"
    : `&{${Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k[0]!.toUpperCase()}${k.slice(1)}: ${JSON.stringify(x)}`)
        .join(", ")}}`;

function fieldsOf(profile: SpecProfile): Field[] {
  const fields: Field[] = [
    { name: "AccessModes", get: (s) => s.accessModes, short: stringList },
    { name: "Selector", get: (s) => s.selector, short: objectRef },
    {
      name: "Resources",
      get: (s) => s.resources,
      short: resourcesShort,
      nested: resourcesNested(profile === "vac" ? "core.VolumeResourceRequirements" : "core.ResourceRequirements"),
    },
    { name: "VolumeName", get: (s) => s.volumeName ?? "", short: (v) => quote(String(v)) },
    { name: "StorageClassName", get: (s) => s.storageClassName, short: ptr },
    { name: "VolumeMode", get: (s) => s.volumeMode, short: ptr },
    { name: "DataSource", get: (s) => s.dataSource, short: objectRef },
    { name: "DataSourceRef", get: (s) => s.dataSourceRef, short: objectRef },
  ];
  if (profile === "vac")
    fields.push({ name: "VolumeAttributesClassName", get: (s) => s.volumeAttributesClassName, short: ptr });
  return fields;
}

type Record1 =
  | { kind: "equal"; field: Field; value: unknown }
  | { kind: "changed"; field: Field; a: unknown; b: unknown };

const CONTEXT = 2;

/** The diff of two PVC specs as the API server embeds it in its message. */
export function specDiff(oldSpec: Spec, newSpec: Spec, profile: SpecProfile): string {
  return profile === "vac" ? specJsonDiff(oldSpec, newSpec) : specCmpDiff(oldSpec, newSpec, profile);
}

/**
 * The internal core.PersistentVolumeClaimSpec as encoding/json writes it (Go field names, no
 * omitempty: nil is null), indented by one space, as apimachinery's diff.Diff (v1.34) marshals both sides.
 */
function internalSpecJson(s: Spec): string {
  const ref = (r: unknown, namespaced: boolean) => {
    if (!r || typeof r !== "object") return null;
    const o = r as Record<string, unknown>;
    return {
      APIGroup: o.apiGroup ?? null,
      Kind: o.kind ?? "",
      Name: o.name ?? "",
      ...(namespaced ? { Namespace: o.namespace ?? null } : {}),
    };
  };
  const list = (m: Record<string, unknown> | undefined) =>
    m
      ? Object.fromEntries(
          Object.keys(m)
            .sort()
            .map((k) => [k, String(m[k])]),
        )
      : null;
  const spec = {
    AccessModes: s.accessModes ?? null,
    Selector: s.selector ?? null,
    Resources: {
      Limits: list(s.resources?.limits as Record<string, unknown> | undefined),
      Requests: list(s.resources?.requests as Record<string, unknown> | undefined),
    },
    VolumeName: s.volumeName ?? "",
    StorageClassName: s.storageClassName ?? null,
    VolumeMode: s.volumeMode ?? null,
    DataSource: ref(s.dataSource, false),
    DataSourceRef: ref(s.dataSourceRef, true),
    VolumeAttributesClassName: s.volumeAttributesClassName ?? null,
  };
  return JSON.stringify(spec, null, " ");
}

/** go-difflib's unified diff (3 lines of context, no file header) of two texts, each line ending in a newline. */
export function unifiedLineDiff(a: string, b: string, context = 3): string {
  const x = a.split("\n");
  const y = b.split("\n");
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  // Opcodes: runs of equal lines and of replaced ones (deletions before insertions).
  type Op = { equal: boolean; i1: number; i2: number; j1: number; j2: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      const i1 = i;
      const j1 = j;
      while (i < n && j < m && x[i] === y[j]) {
        i++;
        j++;
      }
      ops.push({ equal: true, i1, i2: i, j1, j2: j });
    } else {
      const i1 = i;
      const j1 = j;
      while ((i < n || j < m) && !(i < n && j < m && x[i] === y[j])) {
        if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) j++;
        else i++;
      }
      ops.push({ equal: false, i1, i2: i, j1, j2: j });
    }
  }
  if (!ops.some((o) => !o.equal)) return "";
  // difflib's get_grouped_opcodes(n): trim the ends, split equal runs longer than 2n.
  const codes = ops.map((o) => ({ ...o }));
  if (codes[0]!.equal) {
    const c = codes[0]!;
    c.i1 = Math.max(c.i1, c.i2 - context);
    c.j1 = Math.max(c.j1, c.j2 - context);
  }
  const last = codes.at(-1)!;
  if (last.equal) {
    last.i2 = Math.min(last.i2, last.i1 + context);
    last.j2 = Math.min(last.j2, last.j1 + context);
  }
  const groups: Op[][] = [];
  let group: Op[] = [];
  for (const c of codes) {
    if (c.equal && c.i2 - c.i1 > 2 * context) {
      group.push({ ...c, i2: Math.min(c.i2, c.i1 + context), j2: Math.min(c.j2, c.j1 + context) });
      groups.push(group);
      group = [{ ...c, i1: Math.max(c.i1, c.i2 - context), j1: Math.max(c.j1, c.j2 - context) }];
    } else group.push(c);
  }
  if (group.length && !(group.length === 1 && group[0]!.equal)) groups.push(group);
  const range = (start: number, stop: number) => {
    const length = stop - start;
    if (length === 1) return `${start + 1}`;
    return `${length === 0 ? start : start + 1},${length}`;
  };
  const out: string[] = [];
  for (const g of groups) {
    out.push(`@@ -${range(g[0]!.i1, g.at(-1)!.i2)} +${range(g[0]!.j1, g.at(-1)!.j2)} @@\n`);
    for (const c of g) {
      if (c.equal) for (const l of x.slice(c.i1, c.i2)) out.push(` ${l}\n`);
      else {
        for (const l of x.slice(c.i1, c.i2)) out.push(`-${l}\n`);
        for (const l of y.slice(c.j1, c.j2)) out.push(`+${l}\n`);
      }
    }
  }
  return out.join("");
}

/** v1.34: the unified diff of the two specs as JSON. */
function specJsonDiff(oldSpec: Spec, newSpec: Spec): string {
  return unifiedLineDiff(internalSpecJson(oldSpec), internalSpecJson(newSpec));
}

/** go-cmp's `cmp.Diff(old, new)` of two PVC specs, as embedded in a v1.24 API server's message. */
function specCmpDiff(oldSpec: Spec, newSpec: Spec, profile: SpecProfile): string {
  const records: Record1[] = fieldsOf(profile).map((field) => {
    const a = field.get(oldSpec);
    const b = field.get(newSpec);
    return sameJSON(a, b) ? { kind: "equal", field, value: a } : { kind: "changed", field, a, b };
  });

  // Group runs of equal records and decide which to show (numContextRecords = 2 in go-cmp).
  type Shown = { kind: "record"; record: Record1 } | { kind: "elided"; count: number };
  const shown: Shown[] = [];
  let i = 0;
  const groups: Record1[][] = [];
  while (i < records.length) {
    const equal = records[i]!.kind === "equal";
    const run: Record1[] = [];
    while (i < records.length && (records[i]!.kind === "equal") === equal) run.push(records[i++]!);
    groups.push(run);
  }
  groups.forEach((run, g) => {
    if (run[0]!.kind !== "equal") {
      run.forEach((record) => shown.push({ kind: "record", record }));
      return;
    }
    let lo = 0;
    let hi = 0;
    while (lo < CONTEXT && lo + hi < run.length && g !== 0) lo++;
    while (hi < CONTEXT && lo + hi < run.length && g !== groups.length - 1) hi++;
    if (run.length - (lo + hi) === 1) hi++;
    run.slice(0, lo).forEach((record) => shown.push({ kind: "record", record }));
    if (run.length - lo - hi > 0) shown.push({ kind: "elided", count: run.length - lo - hi });
    run.slice(run.length - hi).forEach((record) => shown.push({ kind: "record", record }));
  });

  // Render, aligning runs of one-line records on the longest name in the run.
  const out = [`${prefix(" ")}core.PersistentVolumeClaimSpec{`];
  let pending: { mark: " " | "-" | "+"; name: string; value: string }[] = [];
  const flush = () => {
    const width = Math.max(0, ...pending.map((p) => p.name.length + 1));
    for (const p of pending) out.push(`${prefix(p.mark)}\t${`${p.name}:`.padEnd(width)} ${p.value},`);
    pending = [];
  };
  for (const s of shown) {
    if (s.kind === "elided") {
      flush();
      out.push(`${prefix(" ")}\t... // ${s.count} identical fields`);
      continue;
    }
    const r = s.record;
    if (r.kind === "equal") pending.push({ mark: " ", name: r.field.name, value: r.field.short(r.value) });
    else if (r.field.nested) {
      flush();
      out.push(...r.field.nested(r.a, r.b));
    } else {
      pending.push({ mark: "-", name: r.field.name, value: r.field.short(r.a) });
      pending.push({ mark: "+", name: r.field.name, value: r.field.short(r.b) });
    }
  }
  flush();
  out.push(`${prefix(" ")}}`, "");
  return out.join("\n");
}
