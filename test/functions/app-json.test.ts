// JSON bodies of the API routes read strictly (functions/http/strict-json.ts): a key given twice
// and an integer JavaScript cannot hold exactly are refused with 400 naming them, before anything
// runs; the scanner itself on hostile and ordinary texts.
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { createApp } from "../../functions/app.js";
import { RecentIds, webhookHeaders } from "../../functions/auth.js";
import { strictJsonProblem } from "../../functions/http/strict-json.js";
import { capturedSim, claimApplies } from "../support/index.js";

const TOKEN = "json-token-0123456789abcdef";
const SECRET = `whsec_${btoa("json-relay-secret-0123456789abcd")}`;
const bearerJson = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

const setUp = () => {
  const sim = capturedSim();
  const app = createApp({
    reader: sim.reader,
    writers: sim.writers,
    auth: { bearerTokens: [TOKEN], webhookSecrets: [SECRET], replay: new RecentIds() },
    now: () => sim.now(),
  });
  const annotations = () => JSON.stringify((sim.get("statefulsets", "default", "web") as any).metadata.annotations);
  return { sim, app, annotations };
};

describe("duplicate keys in a JSON body", () => {
  // Defect: JSON.parse keeps the last of two equal keys: {"dryRun":true,"dryRun":false} ran a real step.
  it("POST /v1/steps refuses a key given twice with 400 naming it, and runs nothing", async () => {
    const { sim, app, annotations } = setUp();
    const before = annotations();
    const res = await app.request("/v1/steps", {
      method: "POST",
      headers: bearerJson,
      body: '{"namespace":"default","name":"web","dryRun":true,"dryRun":false}',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toEqual({
      error: "BadRequest",
      message: 'invalid request body: the key "dryRun" is given twice (at dryRun)',
      issues: [{ path: "dryRun", message: 'the key "dryRun" is given twice: send it once' }],
    });
    expect(claimApplies(sim)).toEqual([]);
    expect(annotations()).toBe(before);
  });

  it("sees a duplicate spelled with escapes (\\u0052 is R)", async () => {
    const { app } = setUp();
    const res = await app.request("/v1/steps", {
      method: "POST",
      headers: bearerJson,
      body: '{"namespace":"default","name":"web","dryRun":true,"dry\\u0052un":false}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).issues).toEqual([
      { path: "dryRun", message: 'the key "dryRun" is given twice: send it once' },
    ]);
  });

  it("POST /v1/relay refuses a nested duplicate, naming its path", async () => {
    const { sim, app } = setUp();
    const body = `{"type":"statefulset.changed","timestamp":"${new Date().toISOString()}","data":{"namespace":"default","name":"web","name":"db"}}`;
    const res = await app.request("/v1/relay", {
      method: "POST",
      headers: { "content-type": "application/json", ...(await webhookHeaders(SECRET, "evt_dup", new Date(), body)) },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).issues).toEqual([
      { path: "data.name", message: 'the key "name" is given twice: send it once' },
    ]);
    expect(claimApplies(sim)).toEqual([]);
  });

  it("POST …/templates refuses a duplicate in a JSON document, and writes nothing", async () => {
    const { app, annotations } = setUp();
    const before = annotations();
    const body =
      '[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi","storage":"1Gi"}}}}]';
    const res = await app.request("/v1/statefulsets/default/web/templates", {
      method: "POST",
      headers: bearerJson,
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).issues).toEqual([
      { path: "0.spec.resources.requests.storage", message: 'the key "storage" is given twice: send it once' },
    ]);
    expect(annotations()).toBe(before);
  });
});

describe("integers beyond 2^53 in a JSON body", () => {
  // Defect: 9007199254740993 became 9007199254740992 without a word.
  it("POST …/templates refuses an integer JavaScript would round, naming where it is", async () => {
    const { app, annotations } = setUp();
    const before = annotations();
    const body =
      '[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":9007199254740993}}}}]';
    const res = await app.request("/v1/statefulsets/default/web/templates", {
      method: "POST",
      headers: bearerJson,
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).issues).toEqual([
      {
        path: "0.spec.resources.requests.storage",
        message: "the number 9007199254740993 is beyond ±(2^53 - 1) and would be rounded: send it as a string",
      },
    ]);
    expect(annotations()).toBe(before);
  });

  it("POST /v1/steps refuses one too, before the schema", async () => {
    const { app } = setUp();
    const res = await app.request("/v1/steps", {
      method: "POST",
      headers: bearerJson,
      body: '{"namespace":"default","name":"web","n":-1e400}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).issues[0].path).toBe("n");
  });

  it("takes the templates with an exact integer storage as before", async () => {
    const { app, sim } = setUp();
    const body =
      '[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast","resources":{"requests":{"storage":5368709120}}}}]';
    const res = await app.request("/v1/statefulsets/default/web/templates", {
      method: "POST",
      headers: bearerJson,
      body,
    });
    expect(res.status).toBe(200);
    expect((sim.get("statefulsets", "default", "web") as any).metadata.annotations[Keys.templates]).toContain(
      "5368709120",
    );
  });
});

describe("strictJsonProblem", () => {
  it("finds nothing in ordinary JSON: equal keys in different objects, strings that look like keys or numbers", () => {
    const ok = [
      "{}",
      "[]",
      '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}',
      '{"a":"\\"a\\":1,\\"a\\":2","b":"9007199254740993"}',
      '{"x":9007199254740991,"y":-9007199254740991,"z":0.1,"w":1.5e-300,"u":123456789.125,"v":-0}',
      ' [ 1 , 2 , { "k" : [ true , false , null ] } ] ',
      '"just a string"',
      "42",
    ];
    for (const text of ok) expect(strictJsonProblem(text), text).toBeUndefined();
  });

  it("names the first duplicate and where it is", () => {
    expect(strictJsonProblem('{"a":[{"b":1},{"b":1,"c":{"d":1,"d":2}}]}')).toEqual({
      path: "a.1.c.d",
      message: 'the key "d" is given twice: send it once',
      what: 'the key "d" is given twice',
      key: "d",
    });
    expect(strictJsonProblem('[[],[{"x":1,"x":1}]]')?.path).toBe("1.0.x");
  });

  it("names an inexact integer, however it is written", () => {
    for (const n of ["9007199254740992", "-9007199254740993", "1e16", "1.5e300", "12345678901234567890.0", "1e400"]) {
      expect(strictJsonProblem(`{"n":${n}}`), n).toMatchObject({ path: "n" });
    }
  });

  it("stays linear on hostile input: 200,000 keys in one object, 100,000 nested arrays", () => {
    const many = `{${Array.from({ length: 200_000 }, (_, i) => `"k${i}":${i}`).join(",")}}`;
    expect(strictJsonProblem(many)).toBeUndefined();
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(strictJsonProblem(deep)).toBeUndefined();
    expect(strictJsonProblem(`${"[".repeat(100_000)}{"a":1,"a":2}${"]".repeat(100_000)}`)?.key).toBe("a");
  });
});
