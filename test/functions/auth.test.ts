import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type AnyReplayGuard,
  bearerMatches,
  claimWebhookId,
  constantTimeEqual,
  decodeWebhookSecret,
  MAX_WEBHOOK_ID_BYTES,
  RecentIds,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  webhookSecretList,
} from "../../functions/auth.js";

const key = Buffer.from("claimstep-test-key-0123456789abcdef");
const secret = `whsec_${key.toString("base64")}`;
const otherSecret = `whsec_${Buffer.from("another-key-0123456789abcdefghij").toString("base64")}`;
const now = new Date("2026-11-30T10:00:00Z");
const ts = Math.floor(now.getTime() / 1000);
const body = '{"type":"statefulset.changed"}';

const input = (over: Partial<Parameters<typeof verifyWebhook>[0]> = {}) => ({
  secrets: [secret],
  id: "msg_1",
  timestamp: String(ts),
  signature: signWebhook(secret, "msg_1", ts, body),
  body,
  ...over,
});

// The library checks timestamps against Date.now(): stand at `now`.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("Standard Webhooks signing (the standardwebhooks package)", () => {
  it("signs id.timestamp.body with HMAC-SHA256 of the base64-decoded secret (checked against node:crypto)", () => {
    const expected = createHmac("sha256", key).update(`msg_1.${ts}.${body}`).digest("base64");
    expect(signWebhook(secret, "msg_1", ts, body)).toBe(`v1,${expected}`);
    const headers = webhookHeaders(secret, "msg_1", now, body);
    expect(headers).toEqual({
      "webhook-id": "msg_1",
      "webhook-timestamp": String(ts),
      "webhook-signature": `v1,${expected}`,
    });
    // What the official library's verifier accepts, whatever claimstep makes of it.
    expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
  });

  it("rejects secrets that are not whsec_<base64>", () => {
    expect(() => decodeWebhookSecret("plain")).toThrow(/whsec_/);
    expect(() => decodeWebhookSecret("whsec_***")).toThrow(/base64/);
    expect(() => decodeWebhookSecret(`whsec_${btoa("short")}`)).toThrow(/16 bytes/);
    expect(decodeWebhookSecret(secret)).toEqual(new Uint8Array(key));
  });

  it("reads a rotation: several secrets separated by spaces or commas, the first signs", () => {
    expect(webhookSecretList(`${otherSecret}, ${secret}`)).toEqual([otherSecret, secret]);
    expect(webhookSecretList(` ${otherSecret}\n${secret} `)).toEqual([otherSecret, secret]);
    expect(webhookSecretList(undefined)).toEqual([]);
  });
});

describe("verifyWebhook", () => {
  it("accepts a valid signature", () => {
    expect(verifyWebhook(input())).toEqual({ ok: true, id: "msg_1" });
  });

  it("accepts when one of several space-separated signatures matches, and any secret of a rotation", () => {
    const good = signWebhook(secret, "msg_1", ts, body);
    expect(verifyWebhook(input({ signature: `v1,AAAA v1a,xyz ${good}` })).ok).toBe(true);
    expect(verifyWebhook(input({ secrets: [otherSecret, secret] })).ok).toBe(true);
    expect(verifyWebhook(input({ secrets: [secret, otherSecret] })).ok).toBe(true);
    // Signed with the new secret while the receiver still lists the old one first.
    expect(
      verifyWebhook(input({ secrets: [secret, otherSecret], signature: signWebhook(otherSecret, "msg_1", ts, body) }))
        .ok,
    ).toBe(true);
  });

  it.each([
    ["missing id", { id: undefined }, "MissingHeaders"],
    ["missing timestamp", { timestamp: undefined }, "MissingHeaders"],
    ["missing signature", { signature: undefined }, "MissingHeaders"],
    ["non-numeric timestamp", { timestamp: "2026-11-30" }, "BadTimestamp"],
    ["timestamp with trailing junk", { timestamp: `${ts}abc` }, "BadTimestamp"],
    ["timestamp 6 minutes old", { timestamp: String(ts - 360) }, "TimestampOutOfTolerance"],
    ["timestamp 6 minutes ahead", { timestamp: String(ts + 360) }, "TimestampOutOfTolerance"],
    ["tampered body", { body: '{"type":"other"}' }, "NoMatchingSignature"],
    ["wrong secret", { secrets: [otherSecret] }, "NoMatchingSignature"],
    ["unversioned signature", { signature: "not-a-signature" }, "NoMatchingSignature"],
    ["bad base64", { signature: "v1,@@@" }, "NoMatchingSignature"],
    ["an 8,000-character id (issue 24, item 6)", { id: "x".repeat(8_000) }, "BadId"],
    ["an id of 101 two-byte characters (202 bytes)", { id: "é".repeat(101) }, "BadId"],
  ] as const)("rejects %s", (_name, over, failure) => {
    expect(verifyWebhook(input(over as never))).toMatchObject({ ok: false, failure });
  });

  it("accepts a timestamp exactly at the tolerance edge", () => {
    const old = ts - 300;
    expect(
      verifyWebhook(input({ timestamp: String(old), signature: signWebhook(secret, "msg_1", old, body) })).ok,
    ).toBe(true);
  });

  it("never stores an over-long id, signed or not (a store of 10,000 ids of 16 KiB each is 160 MiB)", () => {
    const replay = new RecentIds();
    const id = "m".repeat(MAX_WEBHOOK_ID_BYTES + 1);
    const verdict = verifyWebhook(input({ replay, id, signature: signWebhook(secret, id, ts, body) }));
    expect(verdict).toMatchObject({ ok: false, failure: "BadId" });
    expect(verdict.ok ? "" : verdict.message).toMatch(/webhook-id is 201 bytes; at most 200/);
    expect(replay.size).toBe(0);
    const atLimit = "m".repeat(MAX_WEBHOOK_ID_BYTES);
    expect(verifyWebhook(input({ replay, id: atLimit, signature: signWebhook(secret, atLimit, ts, body) })).ok).toBe(
      true,
    );
  });

  it("rejects a replayed id, but only once the signature was valid", () => {
    const replay = new RecentIds();
    expect(verifyWebhook(input({ replay, body: "forged" })).ok).toBe(false);
    expect(replay.size).toBe(0);
    expect(verifyWebhook(input({ replay })).ok).toBe(true);
    expect(verifyWebhook(input({ replay }))).toMatchObject({ ok: false, failure: "Replayed" });
  });

  it("keeps an id for the whole tolerance window of its timestamp, then the timestamp check takes over", () => {
    const replay = new RecentIds();
    expect(verifyWebhook(input({ replay })).ok).toBe(true);
    vi.setSystemTime(new Date(now.getTime() + 299_000));
    expect(verifyWebhook(input({ replay }))).toMatchObject({ ok: false, failure: "Replayed" });
    vi.setSystemTime(new Date(now.getTime() + 302_000));
    expect(verifyWebhook(input({ replay }))).toMatchObject({ ok: false, failure: "TimestampOutOfTolerance" });
    expect(replay.claim("other", Date.now(), Date.now() + 1000)).toEqual({ ok: true });
    expect(replay.size).toBe(1); // the expired id is gone
  });

  // Defect: the store was an LRU of 10,000 ids, so 10,000 other signed requests pushed an id out
  // well within its window and the captured request could be replayed.
  it("cannot be made to forget an id by 10,000 other deliveries: it refuses new ones instead (503)", () => {
    const replay = new RecentIds();
    expect(verifyWebhook(input({ replay })).ok).toBe(true);
    for (let i = 0; i < 9_999; i++) {
      const id = `other_${i}`;
      expect(verifyWebhook(input({ replay, id, signature: signWebhook(secret, id, ts, body) })).ok).toBe(true);
    }
    const extra = verifyWebhook(
      input({ replay, id: "one_more", signature: signWebhook(secret, "one_more", ts, body) }),
    );
    expect(extra).toMatchObject({ ok: false, failure: "ReplayStoreFull", retryAfterSeconds: 301 });
    expect(verifyWebhook(input({ replay }))).toMatchObject({ ok: false, failure: "Replayed" });
  });
});

describe("the generic replay check fails closed (issue 37, item 5d)", () => {
  // Defect: any answer of the store other than `replayed` or `full` was taken for `{ ok: true }`.
  const odd: unknown[] = [
    undefined,
    null,
    {},
    { ok: "true" },
    { ok: 1 },
    { ok: false },
    { ok: false, reason: "unknown" },
    { ok: false, reason: "full" },
    { ok: false, reason: "full", retryAfterSeconds: -1 },
    { ok: false, reason: "full", retryAfterSeconds: Number.NaN },
  ];
  const unavailable = {
    ok: false,
    failure: "ReplayStoreUnavailable",
    retryAfterSeconds: 5,
    message: expect.stringMatching(
      /^the replay store gave no valid answer \(.*\): the signed request was refused, not accepted unchecked; retry later$/,
    ),
  };

  it.each(odd.map((answer) => [JSON.stringify(answer) ?? "undefined", answer]))(
    "a store answering %s: refused (503), never accepted",
    async (_name, answer) => {
      const store = { claim: () => answer, release: () => {} } as unknown as AnyReplayGuard & { claim: () => never };
      expect(verifyWebhook(input({ replay: store as never }))).toEqual(unavailable);
      const async = { claim: async () => answer, release: () => {} } as unknown as AnyReplayGuard;
      expect(await claimWebhookId(async, "msg_1", String(ts))).toEqual(unavailable);
    },
  );

  it("a store's own answers keep their meaning", async () => {
    const store = (answer: unknown): AnyReplayGuard => ({ claim: async () => answer as never, release: () => {} });
    expect(await claimWebhookId(store({ ok: true }), "msg_1", String(ts))).toEqual({ ok: true, id: "msg_1" });
    expect(await claimWebhookId(store({ ok: false, reason: "replayed" }), "msg_1", String(ts))).toMatchObject({
      ok: false,
      failure: "Replayed",
    });
    expect(
      await claimWebhookId(store({ ok: false, reason: "full", retryAfterSeconds: 2.5 }), "msg_1", String(ts)),
    ).toMatchObject({ ok: false, failure: "ReplayStoreFull", retryAfterSeconds: 3 });
  });
});

describe("RecentIds", () => {
  it("keeps each id until its own expiry, refuses new ids while full, and says when room frees up", () => {
    const ids = new RecentIds(2);
    expect(ids.claim("a", 0, 1000)).toEqual({ ok: true });
    expect(ids.claim("a", 500, 1500)).toEqual({ ok: false, reason: "replayed" });
    expect(ids.claim("b", 600, 5000)).toEqual({ ok: true });
    expect(ids.claim("c", 700, 5000)).toEqual({ ok: false, reason: "full", retryAfterSeconds: 1 }); // a expires at 1000
    expect(ids.claim("a", 900, 1900)).toEqual({ ok: false, reason: "replayed" }); // still remembered
    expect(ids.claim("c", 1000, 5000)).toEqual({ ok: true }); // a expired: room for c
    expect(ids.claim("a", 1100, 2100)).toEqual({ ok: false, reason: "full", retryAfterSeconds: 4 });
    expect(ids.size).toBe(2);
  });

  it("forgets a released id (its delivery failed before doing anything)", () => {
    const ids = new RecentIds();
    expect(ids.claim("a", 0, 1000).ok).toBe(true);
    ids.release("a");
    expect(ids.claim("a", 10, 1000).ok).toBe(true);
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
