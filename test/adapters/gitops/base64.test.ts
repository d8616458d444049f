// UTF-8 ⇄ base64 without Buffer (Workers): the table encoder against Node's own, on every length
// remainder and on text that is not ASCII.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeBase64, encodeBase64 } from "../../../adapters/gitops/base64.js";

describe("encodeBase64", () => {
  it("is Buffer's base64 of the UTF-8 bytes, and decodeBase64 reverses it", () => {
    for (const s of ["", "a", "ab", "abc", "abcd", "é", "claimstep 🚀 ü", "x".repeat(20_000)]) {
      expect(encodeBase64(s)).toBe(Buffer.from(s, "utf8").toString("base64"));
      expect(decodeBase64(encodeBase64(s))).toBe(s);
    }
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (s) => {
        expect(encodeBase64(s)).toBe(Buffer.from(s, "utf8").toString("base64"));
        expect(decodeBase64(encodeBase64(s))).toBe(s);
      }),
      { numRuns: 300 },
    );
  });
});
