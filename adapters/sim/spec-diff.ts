// The diff the API server prints when a PVC's immutable spec changes: go-cmp's report of the
// internal core.PersistentVolumeClaimSpec (fixtures pvc-change-class.txt, pvc-expand-unbound.txt).
// Only what PVC specs contain is rendered; equal runs are elided with two records of context.
// go-cmp marks lines with a non-breaking space ("\u00a0\u00a0", "-\u00a0", "+\u00a0") so that nobody
// parses its output; the captured responses have them, so this has them too.
import type { PersistentVolumeClaimSpec } from "../../core/k8s.js";
import { formatBytes, toBytes } from "../../core/quantity.js";

/** Which API server's struct to print: v1.24 (the fixtures) or one with VolumeAttributesClass (v1.29+). */
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
    return { value: bytes.toString(), scale: 0, format: "BinarySI", ...(formatBytes(bytes) === s ? { canonical: s } : {}) };
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

const resourcesNested = (typeName: string) => (a: unknown, b: unknown): string[] => {
  const x = a as Resources;
  const y = b as Resources;
  const lines = [`${prefix(" ")}\tResources: ${typeName}{`];
  for (const [name, key] of [["Limits", "limits"], ["Requests", "requests"]] as const) {
    if (sameJSON(x?.[key], y?.[key])) lines.push(`${prefix(" ")}\t\t${name}: ${resourceList(x?.[key], false)},`);
    else lines.push(...listLines("-", name, x?.[key]), ...listLines("+", name, y?.[key]));
  }
  lines.push(`${prefix(" ")}\t},`);
  return lines;
};

const stringList = (v: unknown) => (Array.isArray(v) && v.length ? `{${v.map((s) => quote(String(s))).join(", ")}}` : "nil");
const objectRef = (v: unknown) => (v === undefined || v === null ? "nil" : `&{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k[0]!.toUpperCase()}${k.slice(1)}: ${JSON.stringify(x)}`).join(", ")}}`);

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
  if (profile === "vac") fields.push({ name: "VolumeAttributesClassName", get: (s) => s.volumeAttributesClassName, short: ptr });
  return fields;
}

type Record1 = { kind: "equal"; field: Field; value: unknown } | { kind: "changed"; field: Field; a: unknown; b: unknown };

const CONTEXT = 2;

/** go-cmp's `cmp.Diff(old, new)` of two PVC specs, as embedded in the API server's message. */
export function specDiff(oldSpec: Spec, newSpec: Spec, profile: SpecProfile): string {
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
