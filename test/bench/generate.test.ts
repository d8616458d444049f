// The benchmark's synthetic sets are what they claim to be: shaped like the captured API server
// objects, valid for the reader's schemas, and at the rollout stage they are named after.

import { describe, expect, it } from "vitest";
import {
  DIRECT_WRITER,
  GENERATED_AT,
  generateCluster,
  parseResponses,
  type RolloutStage,
  responseBytes,
  responsesOf,
  THREE_TEMPLATES,
  uidOf,
} from "../../bench/generate.js";
import { parseRaw, validateResponses } from "../../bench/validate.js";
import { Keys } from "../../core/keys.js";
import { planStep } from "../../core/plan/plan.js";
import { patchOf } from "../core/builders.js";
import { fixture } from "../fixtures/apiserver.js";

/** Every key path of a JSON value (array items as `[]`), leaving out free-form maps. */
function shapeOf(value: unknown, path = "", out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) shapeOf(item, `${path}[]`, out);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const p = `${path}.${k}`;
      out.add(p);
      if (k === "labels" || k === "annotations" || k === "fieldsV1") continue;
      shapeOf(v, p, out);
    }
  }
  return out;
}

const oneTemplate = [{ name: "data", live: "1Gi", desired: "2Gi" }];

describe("generated objects have the captured API server's shapes", () => {
  const c = generateCluster({ replicas: 3, templates: oneTemplate, stage: "start" });
  it("pods", () => expect(shapeOf(c.pods[0])).toEqual(shapeOf(fixture("pod-list").body.items[0])));
  it("claims", () => expect(shapeOf(c.claims[0])).toEqual(shapeOf(fixture("pvc-list").body.items[0])));
  it("storage classes", () =>
    expect(shapeOf(c.storageClasses)).toEqual(shapeOf(fixture("storageclass-list").body.items)));
  it("the StatefulSet", () => expect(shapeOf(c.statefulSet)).toEqual(shapeOf(fixture("statefulset-web").body)));
});

describe("generateCluster", () => {
  it("makes replicas × templates claims, named as the StatefulSet controller names them", () => {
    const c = generateCluster({ replicas: 4 });
    expect(c.pods.map((p) => p.metadata.name)).toEqual(["web-0", "web-1", "web-2", "web-3"]);
    expect(c.claims).toHaveLength(4 * THREE_TEMPLATES.length);
    expect(c.claims.map((p) => p.metadata.name)).toContain("wal-web-3");
    expect(new Set(c.claims.map((p) => p.metadata.uid)).size).toBe(c.claims.length);
  });
  it("is deterministic", () => {
    expect(responsesOf(generateCluster({ replicas: 5 }))).toEqual(responsesOf(generateCluster({ replicas: 5 })));
    expect(uidOf("pod", 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uidOf("pod", 1)).not.toBe(uidOf("pod", 2));
  });
  it("refuses a replica count that is not a positive integer", () => {
    expect(() => generateCluster({ replicas: 0 })).toThrow(/replicas must be a positive integer/);
    expect(() => generateCluster({ replicas: 2.5 })).toThrow(/replicas must be a positive integer/);
  });
});

describe("responses", () => {
  const c = generateCluster({ replicas: 6, stage: "mid" });
  const r = responsesOf(c);
  it("parse back to the same objects", () => {
    const s = parseResponses(r);
    expect(s.statefulSet).toEqual(c.statefulSet);
    expect(s.pods).toEqual(c.pods);
    expect(s.claims).toEqual(c.claims);
    expect(s.storageClasses).toEqual(c.storageClasses);
    expect(responseBytes(r)).toBe(r.statefulSet.length + r.pods.length + r.claims.length + r.storageClasses.length);
  });
  it("are lists as the API server sends them", () => {
    expect(JSON.parse(r.claims)).toMatchObject({
      kind: "PersistentVolumeClaimList",
      apiVersion: "v1",
      metadata: { resourceVersion: expect.any(String) },
    });
    expect(JSON.parse(r.pods).kind).toBe("PodList");
  });
  it("pass the reader's schemas, which drop managedFields and leave their input alone", () => {
    const raw = parseRaw(r);
    const s = validateResponses(raw);
    expect(s.claims).toHaveLength(18);
    expect(s.claims[0]!.metadata.managedFields).toBeUndefined();
    expect(s.statefulSet.metadata.managedFields).toBeUndefined();
    expect(
      (raw.claims as { items: { metadata: { managedFields?: unknown } }[] }).items[0]!.metadata.managedFields,
    ).toBeDefined();
  });
  it("with a broken body, validation throws", () => {
    const raw = parseRaw(r);
    (raw.claims as { items: { spec: unknown }[] }).items[0]!.spec = "nope";
    expect(() => validateResponses(raw)).toThrow();
  });
});

describe("rollout stages are what the planner sees", () => {
  const plan = (stage: RolloutStage, replicas = 6) => {
    const c = generateCluster({ replicas, stage });
    return { c, d: planStep(parseResponses(responsesOf(c)), GENERATED_AT, DIRECT_WRITER) };
  };
  it("start: the highest ordinal's first claim is written next", () => {
    const { d } = plan("start");
    expect(d.phase).toBe("Progressing");
    expect(patchOf(d.action)?.claim).toBe("data-web-5");
    expect(patchOf(d.action)?.storage).toBe("20Gi");
  });
  it("mid: the upper half is updated, the next ordinal resizes, the rest wait; the status is already written", () => {
    const { c, d } = plan("mid");
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("ClaimResizing");
    expect(d.status.counts).toMatchObject({ updated: 3, inFlight: 1, pending: 2, total: 6 });
    expect(d.action).toBeUndefined();
    expect(d.setAnnotations).toBeUndefined();
    expect(c.statefulSet.metadata.annotations?.[Keys.updateRevision]).toBe(c.revision);
  });
  it("converged: complete, nothing to write", () => {
    const { c, d } = plan("converged");
    expect(d.phase).toBe("Complete");
    expect(d.reason).toBe("Converged");
    expect(d.setAnnotations).toBeUndefined();
    expect(d.events).toEqual([]);
    expect(c.claims.every((p) => p.metadata.labels?.[Keys.revisionLabel] === c.revision)).toBe(true);
  });
});
