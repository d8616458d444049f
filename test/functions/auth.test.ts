import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  RecentIds,
  bearerMatches,
  constantTimeEqual,
  decodeWebhookSecret,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
} from "../../functions/auth.js";

const key = Buffer.from("claimstep-test-key-0123456789abcdef");
const secret = `whsec_${key.toString("base64")}`;
const otherSecret = `whsec_${Buffer.from("another-key-0123456789abcdefghij").toString("base64")}`;
const now = new Date("2026-11-30T10:00:00Z");
const ts = Math.floor(now.getTime() / 1000);
const body = '{"type":"statefulset.changed"}';

const input = async (over: Partial<Parameters<typeof verifyWebhook>[0]> = {}) => ({
  secrets: [secret],
  id: "msg_1",
  timestamp: String(ts),
  signature: await signWebhook(secret, "msg_1", ts, body),
  body,
  now,
  ...over,
});

describe("Standard Webhooks signing", () => {
  it("signs id.timestamp.body with HMAC-SHA256 of the base64-decoded secret (checked against node:crypto)", async () => {
    const expected = createHmac("sha256", key).update(`msg_1.${ts}.${body}`).digest("base64");
    expect(await signWebhook(secret, "msg_1", ts, body)).toBe(`v1,${expected}`);
    const headers = await webhookHeaders(secret, "msg_1", now, body);
    expect(headers).toEqual({ "webhook-id": "msg_1", "webhook-timestamp": String(ts), "webhook-signature": `v1,${expected}` });
  });

  it("rejects secrets that are not whsec_<base64>", () => {
    expect(() => decodeWebhookSecret("plain")).toThrow(/whsec_/);
    expect(() => decodeWebhookSecret("whsec_***")).toThrow(/base64/);
    expect(() => decodeWebhookSecret(`whsec_${btoa("short")}`)).toThrow(/16 bytes/);
  });
});

describe("verifyWebhook", () => {
  it("accepts a valid signature", async () => {
    expect(await verifyWebhook(await input())).toEqual({ ok: true, id: "msg_1" });
  });

  it("accepts when one of several space-separated signatures matches, and with a rotated secret list", async () => {
    const good = await signWebhook(secret, "msg_1", ts, body);
    expect((await verifyWebhook(await input({ signature: `v1,AAAA v1a,xyz ${good}` }))).ok).toBe(true);
    expect((await verifyWebhook(await input({ secrets: [otherSecret, secret] }))).ok).toBe(true);
  });

  it.each([
    ["missing id", { id: undefined }, "MissingHeaders"],
    ["missing timestamp", { timestamp: undefined }, "MissingHeaders"],
    ["missing signature", { signature: undefined }, "MissingHeaders"],
    ["non-numeric timestamp", { timestamp: "2026-11-30" }, "BadTimestamp"],
    ["timestamp 6 minutes old", { timestamp: String(ts - 360) }, "TimestampOutOfTolerance"],
    ["timestamp 6 minutes ahead", { timestamp: String(ts + 360) }, "TimestampOutOfTolerance"],
    ["tampered body", { body: '{"type":"other"}' }, "NoMatchingSignature"],
    ["wrong secret", { secrets: [otherSecret] }, "NoMatchingSignature"],
    ["unversioned signature", { signature: "not-a-signature" }, "NoMatchingSignature"],
    ["bad base64", { signature: "v1,@@@" }, "NoMatchingSignature"],
  ] as const)("rejects %s", async (_name, over, failure) => {
    const verdict = await verifyWebhook(await input(over as never));
    expect(verdict).toMatchObject({ ok: false, failure });
  });

  it("accepts a timestamp exactly at the tolerance edge", async () => {
    const old = ts - 300;
    const sig = await signWebhook(secret, "msg_1", old, body);
    expect((await verifyWebhook(await input({ timestamp: String(old), signature: sig }))).ok).toBe(true);
  });

  it("rejects a replayed id, but only once the signature was valid", async () => {
    const replay = new RecentIds();
    expect((await verifyWebhook(await input({ replay, body: "forged" }))).ok).toBe(false);
    expect(replay.size).toBe(0);
    expect((await verifyWebhook(await input({ replay }))).ok).toBe(true);
    expect(await verifyWebhook(await input({ replay }))).toMatchObject({ ok: false, failure: "Replayed" });
  });
});

describe("RecentIds", () => {
  it("forgets ids after the window and evicts the oldest beyond capacity", () => {
    const ids = new RecentIds(2, 1000);
    expect(ids.seen("a", 0)).toBe(false);
    expect(ids.seen("a", 500)).toBe(true);
    expect(ids.seen("a", 1500)).toBe(false); // window passed: the timestamp check guards it now
    expect(ids.seen("b", 1600)).toBe(false);
    expect(ids.seen("c", 1700)).toBe(false);
    expect(ids.size).toBe(2);
    expect(ids.seen("a", 1800)).toBe(false); // evicted as the oldest
    expect(ids.seen("c", 1900)).toBe(true);
  });
});

describe("bearer tokens and comparison", () => {
  it("matches only an exact token in a Bearer header", async () => {
    const tokens = ["tok-0123456789abcdef", "tok-rotated-0123456789"];
    expect(await bearerMatches("Bearer tok-0123456789abcdef", tokens)).toBe(true);
    expect(await bearerMatches("bearer tok-rotated-0123456789", tokens)).toBe(true);
    expect(await bearerMatches("Bearer tok-0123456789abcde", tokens)).toBe(false);
    expect(await bearerMatches("Bearer tok-0123456789abcdefX", tokens)).toBe(false);
    expect(await bearerMatches("Basic tok-0123456789abcdef", tokens)).toBe(false);
    expect(await bearerMatches(undefined, tokens)).toBe(false);
    expect(await bearerMatches("Bearer tok-0123456789abcdef", [])).toBe(false);
  });

  it("constantTimeEqual compares content and length", () => {
    const b = (s: string) => new TextEncoder().encode(s);
    expect(constantTimeEqual(b("abc"), b("abc"))).toBe(true);
    expect(constantTimeEqual(b("abc"), b("abd"))).toBe(false);
    expect(constantTimeEqual(b("abc"), b("abc\0"))).toBe(false);
    expect(constantTimeEqual(b(""), b(""))).toBe(true);
  });
});
