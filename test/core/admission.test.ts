// The admission webhook's core (issue 23): AdmissionReviews as the v1.24 and v1.34 API servers sent
// them for `kubectl apply` of a 2Gi template (test/fixtures/apiserver/admission-review-*.json),
// and variations: what is patched, what passes untouched, what is refused, and I13 as a property.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ADMISSION_LABEL,
  AdmissionReviewError,
  type AdmissionVerdict,
  admitStatefulSetUpdate,
  type JsonPatchOp,
} from "../../core/admission.js";
import { Keys } from "../../core/keys.js";
import { fixtureJson } from "../fixtures/apiserver.js";

const FIXTURES = ["admission-review-sts-update-vct.json", "admission-review-sts-update-vct-1.34.json"] as const;

/** A review from a fixture, the set opted in by its label unless `optIn` is false. */
function review(
  file: (typeof FIXTURES)[number] = FIXTURES[1],
  change: (object: any, old: any) => void = () => {},
  optIn = true,
): any {
  const r = structuredClone(fixtureJson(file));
  if (optIn) r.request.object.metadata.labels = { ...r.request.object.metadata.labels, [ADMISSION_LABEL]: "enabled" };
  change(r.request.object, r.request.oldObject);
  return r;
}

/** RFC 6902 add/replace on a copy (all the webhook emits). */
function applyPatch(doc: any, patch: readonly JsonPatchOp[]): any {
  const out = structuredClone(doc);
  for (const op of patch) {
    const tokens = op.path
      .slice(1)
      .split("/")
      .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = tokens.pop()!;
    let at = out;
    for (const t of tokens) at = at[t];
    if (op.op === "replace" && !(last in at)) throw new Error(`replace of a missing ${op.path}`);
    if (op.op !== "test") at[last] = structuredClone(op.value);
  }
  return out;
}

const patched = (v: AdmissionVerdict) => {
  if (v.kind !== "patch") throw new Error(`expected a patch, got ${JSON.stringify(v)}`);
  return v;
};

describe("admitStatefulSetUpdate", () => {
  for (const file of FIXTURES) {
    it(`${file}: restores the stored templates and writes the requested ones into the annotation`, () => {
      const r = review(file);
      const v = patched(admitStatefulSetUpdate(r));
      expect(v.uid).toBe(r.request.uid);
      const after = applyPatch(r.request.object, v.patch);
      expect(after.spec.volumeClaimTemplates).toEqual(r.request.oldObject.spec.volumeClaimTemplates);
      const desired = JSON.parse(after.metadata.annotations[Keys.templates]);
      expect(desired).toHaveLength(1);
      expect(desired[0].spec.resources.requests.storage).toBe("2Gi");
      expect(desired[0]).not.toHaveProperty("status");
      expect(desired[0].metadata).not.toHaveProperty("creationTimestamp");
      expect(after.metadata.annotations[Keys.strategy]).toBe("InPlace");
      expect(after.metadata.annotations[Keys.finalize]).toBe("Recreate");
      // kubectl's own annotation and everything else: untouched.
      expect(after.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]).toBe(
        r.request.object.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"],
      );
      expect({ ...after.spec, volumeClaimTemplates: null }).toEqual({
        ...r.request.object.spec,
        volumeClaimTemplates: null,
      });
      expect(v.warnings).toEqual([
        "claimstep will grow data-db-* to 2Gi one ordinal at a time; see `claimstep status db`",
      ]);
    });
  }

  it("the other changes of the same update pass untouched (image, replicas, labels)", () => {
    const r = review(FIXTURES[1], (o) => {
      o.spec.template.spec.containers[0].image = "nginx:1.27";
      o.spec.replicas = 5;
      o.metadata.labels.team = "db";
    });
    const after = applyPatch(r.request.object, patched(admitStatefulSetUpdate(r)).patch);
    expect(after.spec.template.spec.containers[0].image).toBe("nginx:1.27");
    expect(after.spec.replicas).toBe(5);
    expect(after.metadata.labels.team).toBe("db");
  });

  it("ClaimsFirst with the pod template changed in the same request: the pods are held (partition = replicas, the user's recorded)", () => {
    const r = review(FIXTURES[1], (o) => {
      o.spec.replicas = 3;
      o.spec.template.spec.containers[0].image = "nginx:1.27";
      o.metadata.annotations = { ...o.metadata.annotations, [Keys.podCoordination]: "ClaimsFirst" };
    });
    const v = patched(admitStatefulSetUpdate(r));
    const after = applyPatch(r.request.object, v.patch);
    expect(after.spec.updateStrategy).toEqual({
      ...r.request.object.spec.updateStrategy,
      rollingUpdate: { ...r.request.object.spec.updateStrategy.rollingUpdate, partition: 3 },
    });
    expect(after.metadata.annotations[Keys.userPartition]).toBe(
      String(r.request.object.spec.updateStrategy.rollingUpdate.partition ?? 0),
    );
    expect(after.spec.template.spec.containers[0].image).toBe("nginx:1.27");
    expect(v.warnings.at(-1)).toMatch(
      /claimstep holds the pods of .* \(partition \d+\) and replaces each once its claims are ready/,
    );
    // A recorded partition is kept (claimstep already holds); no pod template change, or no ClaimsFirst: no hold.
    const again = review(FIXTURES[1], (o) => {
      o.spec.replicas = 3;
      o.spec.template.spec.containers[0].image = "nginx:1.27";
      o.metadata.annotations = {
        ...o.metadata.annotations,
        [Keys.podCoordination]: "ClaimsFirst",
        [Keys.userPartition]: "1",
      };
    });
    expect(
      applyPatch(again.request.object, patched(admitStatefulSetUpdate(again)).patch).metadata.annotations[
        Keys.userPartition
      ],
    ).toBe("1");
    const noImage = review(FIXTURES[1], (o) => {
      o.spec.replicas = 3;
      o.metadata.annotations = { ...o.metadata.annotations, [Keys.podCoordination]: "ClaimsFirst" };
    });
    expect(
      patched(admitStatefulSetUpdate(noImage)).patch.some((op) => op.path.startsWith("/spec/updateStrategy")),
    ).toBe(false);
    const noCoordination = review(FIXTURES[1], (o) => {
      o.spec.replicas = 3;
      o.spec.template.spec.containers[0].image = "nginx:1.27";
    });
    expect(
      patched(admitStatefulSetUpdate(noCoordination)).patch.some((op) => op.path.startsWith("/spec/updateStrategy")),
    ).toBe(false);
  });

  it("an unchanged template passes with no patch, whatever else changes", () => {
    const r = review(FIXTURES[1], (o, old) => {
      o.spec.volumeClaimTemplates = structuredClone(old.spec.volumeClaimTemplates);
      o.spec.replicas = 3;
    });
    expect(admitStatefulSetUpdate(r)).toEqual({
      kind: "pass",
      uid: r.request.uid,
      why: "TemplatesUnchanged",
      warnings: [],
    });
  });

  it("the server's defaults alone (creationTimestamp: null, status) are no change", () => {
    const r = review(FIXTURES[0], (o, old) => {
      o.spec.volumeClaimTemplates = structuredClone(old.spec.volumeClaimTemplates);
      o.spec.volumeClaimTemplates[0].metadata.creationTimestamp = null;
      delete old.spec.volumeClaimTemplates[0].status;
    });
    expect(admitStatefulSetUpdate(r).kind).toBe("pass");
  });

  it("a set that is not opted in passes with no patch (the API server refuses as before)", () => {
    const r = review(FIXTURES[1], () => {}, false);
    expect(admitStatefulSetUpdate(r)).toMatchObject({ kind: "pass", why: "NotOptedIn" });
  });

  it("opted in by its namespace (the namespaceSelector entry), by InPlace; kept out by an explicit OnClaimDelete", () => {
    expect(
      admitStatefulSetUpdate(
        review(FIXTURES[1], () => {}, false),
        { namespaceOptedIn: true },
      ).kind,
    ).toBe("patch");
    expect(
      admitStatefulSetUpdate(review(FIXTURES[1], (o) => (o.metadata.annotations[Keys.strategy] = "InPlace"), false))
        .kind,
    ).toBe("patch");
    const out = review(FIXTURES[1], (o) => (o.metadata.annotations[Keys.strategy] = "OnClaimDelete"));
    expect(admitStatefulSetUpdate(out, { namespaceOptedIn: true })).toMatchObject({ kind: "pass", why: "NotOptedIn" });
  });

  it("a finalize policy the set states is kept (Never: the live spec keeps the old size)", () => {
    const r = review(FIXTURES[1], (o) => (o.metadata.annotations[Keys.finalize] = "Never"));
    const after = applyPatch(r.request.object, patched(admitStatefulSetUpdate(r)).patch);
    expect(after.metadata.annotations[Keys.finalize]).toBe("Never");
  });

  it("the same apply again (Helm's and Argo CD's retries) changes nothing further", () => {
    const first = review(FIXTURES[1]);
    const stored = applyPatch(first.request.object, patched(admitStatefulSetUpdate(first)).patch);
    // The next apply of the same manifest: the request again carries 2Gi; the stored set is the patched one.
    const again = structuredClone(first);
    again.request.oldObject = structuredClone(stored);
    const second = applyPatch(again.request.object, patched(admitStatefulSetUpdate(again)).patch);
    expect(second.spec).toEqual(stored.spec);
    expect(second.metadata.annotations).toEqual(stored.metadata.annotations);
  });

  it("an object with no annotations gets them in one add", () => {
    const r = review(FIXTURES[1], (o) => delete o.metadata.annotations);
    const v = patched(admitStatefulSetUpdate(r));
    expect(v.patch.filter((p) => p.path.startsWith("/metadata"))).toEqual([
      expect.objectContaining({ op: "add", path: "/metadata/annotations" }),
    ]);
  });

  it("a smaller template is accepted and satisfied (claims never shrink), saying so", () => {
    const r = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "512Mi"));
    expect(patched(admitStatefulSetUpdate(r)).warnings).toEqual([
      "claimstep: data-db-* stay at 1Gi (claims never shrink); the smaller template 512Mi applies to new claims after the re-create",
    ]);
  });

  it("a template added or removed passes with no patch and a warning: never dropped silently", () => {
    const r = review(FIXTURES[1], (o) =>
      o.spec.volumeClaimTemplates.push({
        ...structuredClone(o.spec.volumeClaimTemplates[0]),
        metadata: { name: "wal" },
      }),
    );
    const v = admitStatefulSetUpdate(r);
    expect(v).toMatchObject({ kind: "pass", why: "TemplatesAddedOrRemoved" });
    expect(v.kind === "pass" && v.warnings[0]).toMatch(/adds or removes claim templates \(data → data,wal\)/);
  });

  it("templates that are not valid are refused with claimstep's reason (422)", () => {
    const zero = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "0"));
    expect(admitStatefulSetUpdate(zero)).toMatchObject({
      kind: "deny",
      code: 422,
      message: expect.stringMatching(/template "data" requests 0; storage must be positive/),
    });
    const nameless = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].metadata = {}));
    expect(admitStatefulSetUpdate(nameless)).toMatchObject({
      kind: "deny",
      code: 422,
      message: expect.stringMatching(/spec\.volumeClaimTemplates\.0\.metadata\.name/),
    });
  });

  it("not a StatefulSet UPDATE (a Deployment, a CREATE), or no oldObject: passes with no patch", () => {
    expect(admitStatefulSetUpdate(review(FIXTURES[1], () => {}, true))).toMatchObject({ kind: "patch" });
    const deployment = review();
    deployment.request.kind = { group: "apps", version: "v1", kind: "Deployment" };
    expect(admitStatefulSetUpdate(deployment)).toMatchObject({ kind: "pass", why: "NotAStatefulSetUpdate" });
    const create = review();
    create.request.operation = "CREATE";
    expect(admitStatefulSetUpdate(create)).toMatchObject({ kind: "pass" });
    const noOld = review();
    delete noOld.request.oldObject;
    expect(admitStatefulSetUpdate(noOld)).toMatchObject({
      kind: "pass",
      warnings: [expect.stringMatching(/no oldObject/)],
    });
  });

  it("what is not an AdmissionReview v1 with a request is refused (the route answers 400)", () => {
    for (const bad of [
      null,
      "x",
      {},
      { apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: { uid: "u" } },
      { ...review(), request: { ...review().request, uid: "" } },
    ]) {
      expect(() => admitStatefulSetUpdate(bad)).toThrow(AdmissionReviewError);
    }
  });

  it("I13, as a property: the patch touches only spec.volumeClaimTemplates (restored from oldObject) and claimstep's annotations", () => {
    const quantity = fc.constantFrom("1Gi", "2Gi", "1536Mi", "10Gi", "512Mi", "3Ti");
    const labels = fc.option(fc.dictionary(fc.constantFrom("a", "b", "tier"), fc.constantFrom("x", "y")), {
      nil: undefined,
    });
    fc.assert(
      fc.property(
        quantity,
        fc.option(fc.constantFrom("gold", "silver"), { nil: undefined }),
        labels,
        fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })),
        fc.boolean(),
        (storage, vac, tplLabels, extraAnnotations, optIn) => {
          const r = review(
            FIXTURES[1],
            (o) => {
              const t = o.spec.volumeClaimTemplates[0];
              t.spec.resources.requests.storage = storage;
              if (vac) t.spec.volumeAttributesClassName = vac;
              if (tplLabels) t.metadata.labels = tplLabels;
              o.metadata.annotations = { ...o.metadata.annotations, ...extraAnnotations };
            },
            optIn,
          );
          const v = admitStatefulSetUpdate(r);
          if (v.kind !== "patch") return true;
          const claimstepKey = /^\/metadata\/annotations\/claimstep\.io~1[a-z-]+$/;
          for (const op of v.patch)
            expect(
              op.path === "/spec/volumeClaimTemplates" ||
                op.path === "/metadata/annotations" ||
                claimstepKey.test(op.path),
              op.path,
            ).toBe(true);
          const after = applyPatch(r.request.object, v.patch);
          expect(after.spec.volumeClaimTemplates).toEqual(r.request.oldObject.spec.volumeClaimTemplates);
          for (const [k, value] of Object.entries(r.request.object.metadata.annotations ?? {}))
            if (!k.startsWith("claimstep.io/")) expect(after.metadata.annotations[k]).toBe(value);
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});
