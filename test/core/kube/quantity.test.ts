import { describe, expect, it } from "vitest";
import {
  compareQuantity,
  formatBytes,
  humanBytes,
  MAX_STORAGE_BYTES,
  parseQuantity,
  QuantityError,
  quantityOfNumber,
  toBytes,
} from "../../../core/kube/quantity.js";

describe("parseQuantity: every Kubernetes form, exactly", () => {
  it.each([
    ["0", 0n],
    ["1", 1n],
    ["1Ki", 1024n],
    ["1Mi", 1024n ** 2n],
    ["20Gi", 20n * 1024n ** 3n],
    ["1Ti", 1024n ** 4n],
    ["1Pi", 1024n ** 5n],
    ["2Ei", 2n * 1024n ** 6n],
    ["1k", 1000n],
    ["5M", 5_000_000n],
    ["3G", 3_000_000_000n],
    ["1T", 10n ** 12n],
    ["1P", 10n ** 15n],
    ["1E", 10n ** 18n],
    ["1.5Gi", 1610612736n],
    ["0.5Ki", 512n],
    ["1e3", 1000n],
    ["1E3", 1000n],
    ["1e+3", 1000n],
    ["2.5e2", 250n],
    ["+1k", 1000n],
    ["21474836480", 21474836480n],
    [".5k", 500n],
    ["5.", 5n],
  ])("%s is %s bytes", (q, bytes) => {
    expect(toBytes(q)).toBe(bytes);
  });

  it("keeps sub-unit precision in nano-units and rounds bytes up", () => {
    expect(parseQuantity("100m")).toBe(100_000_000n);
    expect(parseQuantity("1500m")).toBe(1_500_000_000n);
    expect(parseQuantity("1e-3")).toBe(1_000_000n);
    expect(parseQuantity("12n")).toBe(12n);
    expect(parseQuantity("1u")).toBe(1000n);
    expect(toBytes("100m")).toBe(1n);
    expect(toBytes("1001m")).toBe(2n);
    // finer than a nano-unit rounds up, as resource.Quantity does
    expect(parseQuantity("0.0000000001")).toBe(1n);
  });

  it("exceeds Number precision without loss", () => {
    expect(toBytes("8Ei") + toBytes("1")).toBe(9223372036854775809n);
    expect(toBytes("123456789012345678901234567890")).toBe(123456789012345678901234567890n);
  });

  it("negative values parse (the planner rejects them as requests)", () => {
    expect(parseQuantity("-1Ki")).toBe(-1024n * 1_000_000_000n);
  });

  it.each([
    "",
    " ",
    "Gi",
    "1GB",
    "20gi",
    "1.2.3",
    "1 Gi",
    "abc",
    "1Ki2",
    "0x10",
    "1e",
    "--1",
    "1e1000",
    "NaN",
    "Infinity",
  ])("rejects %j with a message naming the string", (q) => {
    expect(() => parseQuantity(q)).toThrow(QuantityError);
    expect(() => parseQuantity(q)).toThrow(`invalid quantity ${JSON.stringify(q)}`);
  });
});

describe("compare and format", () => {
  it("compares across forms", () => {
    expect(compareQuantity("20Gi", "21474836480")).toBe(0);
    expect(compareQuantity("1G", "1Gi")).toBe(-1);
    expect(compareQuantity("1.5Gi", "1536Mi")).toBe(0);
    expect(compareQuantity("2Ti", "2000Gi")).toBe(1);
  });
  it("formats with the largest exact binary suffix", () => {
    expect(formatBytes(21474836480n)).toBe("20Gi");
    expect(formatBytes(1536n * 1024n * 1024n)).toBe("1536Mi");
    expect(formatBytes(1000n)).toBe("1000");
    expect(formatBytes(0n)).toBe("0");
    expect(humanBytes(1610612736n)).toBe("1.5Gi");
    expect(humanBytes(512n)).toBe("512");
  });
});

describe("rule 14: JSON numbers and the largest request", () => {
  it.each([
    [0, "0", 0n],
    [10, "10", 10n],
    [1000, "1k", 1000n],
    [5_000_000, "5M", 5_000_000n],
    [1073741824, "1073741824", 1073741824n],
    [2 ** 63, "9223372036854775808", 9223372036854775808n],
  ])("%s is the quantity %s (%s bytes)", (n, canonical, bytes) => {
    expect(quantityOfNumber(n)).toBe(canonical);
    expect(toBytes(n)).toBe(bytes);
    expect(toBytes(canonical)).toBe(bytes);
    expect(compareQuantity(n, canonical)).toBe(0);
  });
  it.each([1.5, -1, NaN, Infinity, -Infinity])("rejects the number %s", (n) => {
    expect(() => parseQuantity(n)).toThrow(QuantityError);
    expect(() => toBytes(n)).toThrow(`invalid quantity ${String(n)}`);
  });
  it("still rejects what is neither a string nor a number", () => {
    expect(() => parseQuantity(true as never)).toThrow(QuantityError);
  });
  it("the largest request is 2^63−1 bytes: 8Ei is one byte too many, 7Ei fits", () => {
    expect(MAX_STORAGE_BYTES).toBe(9223372036854775807n);
    expect(toBytes("8Ei")).toBe(MAX_STORAGE_BYTES + 1n);
    expect(toBytes("7Ei") <= MAX_STORAGE_BYTES).toBe(true);
  });
});
