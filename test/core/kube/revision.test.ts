import { describe, expect, it } from "vitest";
import { canonicalJSON, fnv1_32, revisionOf, revisionOfCanonical, safeEncode } from "../../../core/kube/revision.js";
import { template } from "../builders.js";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("revision hash (docs/design.md test vectors)", () => {
  it("vector 1", () => {
    const json = '[{"name":"data","storageBytes":"21474836480"}]';
    expect(fnv1_32(bytes(json))).toBe(3616007429);
    expect(revisionOfCanonical(json)).toBe("7b5b44c86f");
  });
  it("vector 2", () => {
    const json =
      '[{"name":"data","storageBytes":"21474836480","volumeAttributesClassName":"gold"},{"labels":{"tier":"db"},"name":"wal","storageBytes":"5368709120"}]';
    expect(fnv1_32(bytes(json))).toBe(3064386208);
    expect(revisionOfCanonical(json)).toBe("74b87db64d");
  });
  it("is FNV-1 (multiply then xor), not FNV-1a", () => {
    expect(fnv1_32(bytes(""))).toBe(0x811c9dc5);
    expect(fnv1_32(bytes("a"))).toBe(0x050c5d7e); // FNV-1a("a") would be 0xe40c292c
  });
  it("safeEncode maps digits through the alphabet", () => {
    expect(safeEncode("0123456789")).toBe("456789bcdf");
  });
});

describe("canonical JSON", () => {
  it("builds vector 2 from real templates, in any order and any quantity form", () => {
    const templates = [
      template({ name: "wal", storage: "5Gi", labels: { tier: "db" } }),
      template({ name: "data", storage: "21474836480", vac: "gold" }),
    ];
    expect(revisionOf(templates as never)).toBe("74b87db64d");
    expect(revisionOf([...templates].reverse() as never)).toBe("74b87db64d");
  });
  it("ignores fields claimstep does not apply, and empty maps", () => {
    const a = template({ name: "data", storage: "20Gi" });
    const b = {
      ...template({ name: "data", storage: "20Gi", accessModes: ["ReadWriteMany"] }),
      metadata: { name: "data", labels: {} },
    };
    expect(canonicalJSON([a] as never)).toBe('[{"name":"data","storageBytes":"21474836480"}]');
    expect(revisionOf([b] as never)).toBe(revisionOf([a] as never));
    expect(revisionOf([a] as never)).toBe("7b5b44c86f");
  });
  it("changes with labels, annotations, size or VAC", () => {
    const base = revisionOf([template({ name: "data", storage: "20Gi" })] as never);
    expect(revisionOf([template({ name: "data", storage: "21Gi" })] as never)).not.toBe(base);
    expect(revisionOf([template({ name: "data", storage: "20Gi", vac: "gold" })] as never)).not.toBe(base);
    expect(revisionOf([template({ name: "data", storage: "20Gi", labels: { a: "b" } })] as never)).not.toBe(base);
  });
});

// Issue 39 point 6: hashes of 8, 9 and 10 characters (bbb45dbb, fd6db6b9b, 65f6dd44ff). Kept
// unpadded on purpose (docs/design.md "Revision hash", its length): the revision is stored on every
// claim and set claimstep stepped, and a padded form would make each of them look out of date.
describe("the hash's length: the decimal digits of the 32-bit hash, unpadded as the controller's", () => {
  it("8, 9 and 10 characters, each the value stored for those templates", () => {
    expect(revisionOf([template({ name: "data", storage: "16Gi" })] as never)).toBe("d54d4765");
    expect(revisionOf([template({ name: "data", storage: "3Gi" })] as never)).toBe("bff8d68f8");
    expect(revisionOf([template({ name: "data", storage: "1Gi" })] as never)).toBe("6b8969fc69");
  });
  it("never starts with 4 (the digit 0): a padded form would be a different string, not the same revision", () => {
    expect(safeEncode("0")).toBe("4");
    for (const storage of ["1Gi", "3Gi", "16Gi", "966Gi"])
      expect(revisionOf([template({ name: "data", storage })] as never)).not.toMatch(/^4/);
  });
});
