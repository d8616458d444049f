// Kubernetes resource quantities, exactly, with BigInt. Values are held in nano-units (the
// finest precision Kubernetes keeps; finer values round up, as resource.Quantity does).
//   <quantity> ::= <sign>? <digits>[.<digits>] (<binarySI> | <decimalSI> | e<signed int>)?
// A quantity may also be a JSON number, as the API server accepts (`"storage": 1073741824`):
// a non-negative integer, read as its canonical decimal form (rule 14).

export class QuantityError extends Error {
  override readonly name = "QuantityError";
  constructor(
    readonly input: string | number,
    reason: string,
  ) {
    super(
      `invalid quantity ${typeof input === "number" ? String(input) : JSON.stringify(input)}: ${reason} (examples: 20Gi, 500M, 1.5Ti, 1e9)`,
    );
  }
}

const NANO = 1_000_000_000n;

const binarySI: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const decimalSI: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const GRAMMAR = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/**
 * The largest storage request claimstep accepts in a template: 2^63−1 bytes, the largest size a
 * CSI driver can be asked for (CapacityRange is an int64). 8Ei is 2^63, one byte too many.
 */
export const MAX_STORAGE_BYTES = (1n << 63n) - 1n;

/** A quantity as the API server accepts it: a string, or a JSON number. */
export type QuantityInput = string | number;

const decimalSuffixes = ["", "k", "M", "G", "T", "P", "E"];

/**
 * A JSON number as the canonical quantity string the API server would return for it (DecimalSI:
 * 1000 → "1k", 1073741824 → "1073741824"). Only non-negative integers are quantities here.
 */
export function quantityOfNumber(n: number): string {
  if (typeof n !== "number" || !Number.isFinite(n)) throw new QuantityError(n, "a JSON number quantity must be finite");
  if (!Number.isInteger(n))
    throw new QuantityError(n, `a JSON number quantity must be a whole number; write it as a string (e.g. "1.5Gi")`);
  if (n < 0) throw new QuantityError(n, "a JSON number quantity must not be negative");
  let value = BigInt(n);
  let i = 0;
  while (value !== 0n && value % 1000n === 0n && i < decimalSuffixes.length - 1) {
    value /= 1000n;
    i++;
  }
  return `${value}${decimalSuffixes[i]}`;
}

/** A quantity as a string: strings as they are, JSON numbers in their canonical form. */
export const quantityString = (input: QuantityInput): string =>
  typeof input === "number" ? quantityOfNumber(input) : input;

const ceilDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return q * b === a || a < 0n ? q : q + 1n;
};

/**
 * A quantity written as a bare number (`7`, `1.5`, `.5`): no unit and no exponent. For storage it
 * is a number of bytes, which a person writing `--storage 7` rarely means.
 */
export function isUnitless(quantity: QuantityInput): boolean {
  if (typeof quantity === "number") return true;
  const m = GRAMMAR.exec(quantity.trim());
  return m !== null && m[4] === undefined && m[5] === undefined && (m[2] !== "" || (m[3] ?? "") !== "");
}

/** Parse a quantity to its exact value in nano-units. */
export function parseQuantity(quantity: QuantityInput): bigint {
  if (typeof quantity !== "string" && typeof quantity !== "number")
    throw new QuantityError(String(quantity), "not a string or a number");
  const input = quantityString(quantity);
  const s = input.trim();
  const m = GRAMMAR.exec(s);
  if (!s || !m) throw new QuantityError(input, "not a Kubernetes quantity");
  const [, sign, intPart = "", fracPart = "", suffix, exponent] = m;
  if (!intPart && !fracPart) throw new QuantityError(input, "no digits");
  if (exponent !== undefined && Math.abs(Number(exponent)) > 100) {
    throw new QuantityError(input, "exponent out of range");
  }
  // mantissa * 10^-fracDigits * multiplier, in nano-units
  let value = BigInt((intPart || "0") + fracPart) * NANO;
  let denominator = 10n ** BigInt(fracPart.length);
  if (suffix && suffix in binarySI) {
    value *= binarySI[suffix]!;
  } else {
    const pow = suffix !== undefined ? decimalSI[suffix]! : exponent !== undefined ? Number(exponent) : 0;
    if (pow >= 0) value *= 10n ** BigInt(pow);
    else denominator *= 10n ** BigInt(-pow);
  }
  const nanos = ceilDiv(value, denominator);
  return sign === "-" ? -nanos : nanos;
}

// A step parses the same few strings ("10Gi", "20Gi") thousands of times: remember them.
// Memoizing a pure function keeps it pure; the bound keeps memory flat on hostile input.
const BYTES_MEMO_LIMIT = 4096;
const bytesMemo = new Map<string, bigint>();

/** The quantity as a whole number of bytes (units), rounded up. */
export function toBytes(input: QuantityInput): bigint {
  if (typeof input === "number") return ceilDiv(parseQuantity(input), NANO);
  const known = bytesMemo.get(input);
  if (known !== undefined) return known;
  const bytes = ceilDiv(parseQuantity(input), NANO);
  if (bytesMemo.size >= BYTES_MEMO_LIMIT) bytesMemo.clear();
  bytesMemo.set(input, bytes);
  return bytes;
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareQuantity(a: QuantityInput, b: QuantityInput): -1 | 0 | 1 {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Format a byte count the way people write storage: the largest exact binary suffix, else plain. */
export function formatBytes(bytes: bigint): string {
  if (bytes === 0n) return "0";
  for (const suffix of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) {
    const unit = binarySI[suffix]!;
    if (bytes % unit === 0n) return `${bytes / unit}${suffix}`;
  }
  return bytes.toString();
}

/**
 * A round size strictly above `bytes`, to suggest where the API server only accepts more than a
 * capacity (X1): the next whole Gi (Mi below 1Gi), e.g. 4Gi → 5Gi, 4.5Gi → 5Gi, 500Mi → 501Mi.
 */
export function roundSizeAbove(bytes: bigint): string {
  const unit = bytes >= binarySI.Gi! ? binarySI.Gi! : binarySI.Mi!;
  return formatBytes((bytes / unit + 1n) * unit);
}

/** A short human form for tables: `1.5Gi`, `20Gi`, `977Mi` (approximate to 2 decimals). */
export function humanBytes(bytes: bigint): string {
  for (const suffix of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) {
    const unit = binarySI[suffix]!;
    if (bytes >= unit) {
      const hundredths = (bytes * 100n) / unit;
      const whole = hundredths / 100n;
      const frac = hundredths % 100n;
      return frac === 0n
        ? `${whole}${suffix}`
        : `${whole}.${frac.toString().padStart(2, "0").replace(/0$/, "")}${suffix}`;
    }
  }
  return bytes.toString();
}
