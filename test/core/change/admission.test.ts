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
  DENY_CODE,
  type JsonPatchOp,
} from "../../../core/change/admission.js";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { fixtureJson } from "../../fixtures/apiserver.js";

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

/** RFC 6902 add/replace/remove on a copy (all the webhook emits). */
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
    if ((op.op === "replace" || op.op === "remove") && !(last in at))
      throw new Error(`${op.op} of a missing ${op.path}`);
    if (op.op === "remove") delete at[last];
    else if (op.op !== "test") at[last] = structuredClone(op.value);
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
      // Written on the user's behalf for this change only: spent by the re-create (docs/finalize.md).
      expect(after.metadata.annotations[Keys.finalizeFor]).toBe(revisionOf(desired));
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
        expect.stringMatching(
          /^claimstep: This change ends in a re-create of StatefulSet [\w-]+\/db once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claimstep\.io\/finalize: Recreate, written by claimstep for this change only \(claimstep\.io\/finalize-for: \w+; later changes roll out in place\)\.$/,
        ),
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

  describe("who wrote claimstep.io/finalize: Recreate, and for how long (docs/finalize.md)", () => {
    const patchedSet = (r: any) => applyPatch(r.request.object, patched(admitStatefulSetUpdate(r)).patch);
    const liveRevision = (r: any) => revisionOf(r.request.oldObject.spec.volumeClaimTemplates);

    it("a Recreate claimstep wrote and the set was re-created at: written again, for this change (the webhook re-creates each change it moves)", () => {
      const r = review(FIXTURES[1], (o, old) => {
        const spent = { [Keys.finalize]: "Recreate", [Keys.finalizeFor]: revisionOf(old.spec.volumeClaimTemplates) };
        o.metadata.annotations = { ...o.metadata.annotations, ...spent };
      });
      const a = patchedSet(r).metadata.annotations;
      expect(a[Keys.finalize]).toBe("Recreate");
      expect(a[Keys.finalizeFor]).toBe(revisionOf(JSON.parse(a[Keys.templates])));
      expect(a[Keys.finalizeFor]).not.toBe(liveRevision(r));
      expect(patched(admitStatefulSetUpdate(r)).warnings.at(-1)).toMatch(
        /^claimstep: This change ends in a re-create of StatefulSet cap\/db .*written by claimstep for this change only/,
      );
    });

    it("the user's own Recreate (no finalize-for) is left as it is and said to be theirs, for every change", () => {
      const r = review(FIXTURES[1], (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, [Keys.finalize]: "Recreate" };
      });
      const a = patchedSet(r).metadata.annotations;
      expect(a[Keys.finalize]).toBe("Recreate");
      expect(a).not.toHaveProperty([Keys.finalizeFor]);
      expect(patched(admitStatefulSetUpdate(r)).warnings.at(-1)).toMatch(
        /^claimstep: This change ends in a re-create of StatefulSet cap\/db once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claimstep\.io\/finalize: Recreate on the set \(yours: every change of its claim templates ends in a re-create\)\.$/,
      );
    });

    it("the user's Never: no Recreate written, no re-create said", () => {
      const r = review(FIXTURES[1], (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, [Keys.finalize]: "Never" };
      });
      const a = patchedSet(r).metadata.annotations;
      expect(a[Keys.finalize]).toBe("Never");
      expect(a).not.toHaveProperty([Keys.finalizeFor]);
      expect(patched(admitStatefulSetUpdate(r)).warnings.join("\n")).not.toMatch(/re-create of StatefulSet/);
    });
  });

  it("a smaller template is accepted and satisfied (claims never shrink), saying so", () => {
    const r = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "512Mi"));
    expect(patched(admitStatefulSetUpdate(r)).warnings).toEqual([
      "claimstep: data-db-* stay at 1Gi (claims never shrink), but one whose expansion to 1Gi failed comes back down to 512Mi if that is above its capacity (X1); the smaller template 512Mi applies to new claims after the re-create",
      expect.stringMatching(
        /^claimstep: This change ends in a re-create of StatefulSet [\w-]+\/db once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claimstep\.io\/finalize: Recreate, written by claimstep for this change only \(claimstep\.io\/finalize-for: \w+; later changes roll out in place\)\.$/,
      ),
    ]);
  });

  it("templates that are not valid are refused with claimstep's reason (400)", () => {
    const zero = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "0"));
    expect(admitStatefulSetUpdate(zero)).toMatchObject({
      kind: "deny",
      code: 400,
      message: expect.stringMatching(/template "data" requests 0; storage must be positive/),
    });
    const nameless = review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].metadata = {}));
    expect(admitStatefulSetUpdate(nameless)).toMatchObject({
      kind: "deny",
      code: 400,
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

  it("I13, as a property: the patch touches only spec.volumeClaimTemplates (restored from oldObject), spec.template when held (restored, kept in claimstep.io/pod-template) and claimstep's annotations", () => {
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
        // Issue 27: templates the request adds, a live one it drops, a pending removal list, a pod template change.
        fc.subarray(["logs", "wal"]),
        fc.boolean(),
        fc.option(fc.subarray(["cache", "logs", "wal"]), { nil: undefined }),
        fc.boolean(),
        (storage, vac, tplLabels, extraAnnotations, optIn, added, drops, removing, podChange) => {
          const r = review(
            FIXTURES[1],
            (o, old) => {
              const t = o.spec.volumeClaimTemplates[0];
              t.spec.resources.requests.storage = storage;
              if (vac) t.spec.volumeAttributesClassName = vac;
              if (tplLabels) t.metadata.labels = tplLabels;
              for (const n of added) o.spec.volumeClaimTemplates.push(template(old, n));
              if (drops) old.spec.volumeClaimTemplates.push(template(old, "cache"));
              if (removing) old.metadata.annotations[Keys.removeTemplates] = JSON.stringify(removing);
              o.metadata.annotations = {
                ...o.metadata.annotations,
                ...extraAnnotations,
                ...(removing ? { [Keys.removeTemplates]: JSON.stringify(removing) } : {}),
              };
              if (podChange) mount(o, added[0] ?? "data");
            },
            optIn,
          );
          const v = admitStatefulSetUpdate(r);
          const namesChanged = added.length > 0 || drops;
          if (optIn && namesChanged) expect(v.kind, "a template added or removed is patched").toBe("patch");
          if (v.kind !== "patch") return true;
          const claimstepKey = /^\/metadata\/annotations\/claimstep\.io~1[a-z-]+$/;
          for (const op of v.patch)
            expect(
              op.path === "/spec/volumeClaimTemplates" ||
                op.path === "/spec/template" ||
                op.path === "/metadata/annotations" ||
                claimstepKey.test(op.path),
              op.path,
            ).toBe(true);
          const after = applyPatch(r.request.object, v.patch);
          expect(after.spec.volumeClaimTemplates).toEqual(r.request.oldObject.spec.volumeClaimTemplates);
          const held = v.patch.some((op) => op.path === "/spec/template");
          expect(held, "held exactly when the names change with the pod template").toBe(namesChanged && podChange);
          if (held) {
            expect(after.spec.template).toEqual(r.request.oldObject.spec.template);
            expect(JSON.parse(after.metadata.annotations[Keys.podTemplate])).toEqual(r.request.object.spec.template);
          } else expect(after.spec.template).toEqual(r.request.object.spec.template);
          expect({ ...after.spec, volumeClaimTemplates: null, template: null }).toEqual({
            ...r.request.object.spec,
            volumeClaimTemplates: null,
            template: null,
          });
          for (const [k, value] of Object.entries(r.request.object.metadata.annotations ?? {}))
            if (!k.startsWith("claimstep.io/")) expect(after.metadata.annotations[k]).toBe(value);
          if (namesChanged) {
            const desired = JSON.parse(after.metadata.annotations[Keys.templates]).map((t: any) => t.metadata.name);
            expect(desired).toEqual(["data", ...added]);
            const remove = after.metadata.annotations[Keys.removeTemplates];
            const want = [...new Set([...(removing ?? []), ...(drops ? ["cache"] : [])])]
              .filter((n) => !desired.includes(n))
              .sort();
            if (want.length) expect(JSON.parse(remove)).toEqual(want);
            else expect(remove).toBeUndefined();
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** A copy of the set's first claim template under another name (the server's defaults included). */
const template = (set: any, name: string) => ({
  ...structuredClone(set.spec.volumeClaimTemplates[0]),
  metadata: { name },
});
/** The pod template's container mounts the claim template `name` (what a `kubectl apply` adding it carries). */
const mount = (set: any, name: string) => {
  const c = set.spec.template.spec.containers[0];
  c.volumeMounts = [...(c.volumeMounts ?? []), { name, mountPath: `/${name}` }];
};
const annotationsOf = (r: any, v: AdmissionVerdict) =>
  applyPatch(r.request.object, patched(v).patch).metadata.annotations;

describe("adding and removing claim templates (issue 27)", () => {
  it("a template added with its mount: templates and pod template restored, the requested ones in claimstep's annotations, a warning in words", () => {
    const r = review(FIXTURES[1], (o) => {
      o.spec.volumeClaimTemplates.push(template(o, "logs"));
      mount(o, "logs");
    });
    const v = patched(admitStatefulSetUpdate(r));
    const after = applyPatch(r.request.object, v.patch);
    expect(after.spec.volumeClaimTemplates).toEqual(r.request.oldObject.spec.volumeClaimTemplates);
    expect(after.spec.template).toEqual(r.request.oldObject.spec.template);
    const a = after.metadata.annotations;
    const desired = JSON.parse(a[Keys.templates]);
    expect(desired.map((t: any) => t.metadata.name)).toEqual(["data", "logs"]);
    for (const t of desired) {
      expect(t).not.toHaveProperty("status");
      expect(t.metadata).not.toHaveProperty("creationTimestamp");
    }
    expect(JSON.parse(a[Keys.podTemplate])).toEqual(r.request.object.spec.template);
    expect(a[Keys.removeTemplates]).toBeUndefined();
    expect(a[Keys.strategy]).toBe("InPlace");
    expect(a[Keys.finalize]).toBe("Recreate");
    expect(a["kubectl.kubernetes.io/last-applied-configuration"]).toBe(
      r.request.object.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"],
    );
    expect({ ...after.spec, template: null, volumeClaimTemplates: null }).toEqual({
      ...r.request.object.spec,
      template: null,
      volumeClaimTemplates: null,
    });
    expect(v.warnings).toEqual([
      "claimstep will add the claim template logs to StatefulSet cap/db: it re-creates the set with it, then replaces the pods one at a time, lowest ordinal first, each once its new claims exist; see `claimstep status db`",
      // The fixture's request also grows data (1Gi → 2Gi): said as before.
      "claimstep will grow data-db-* to 2Gi one ordinal at a time; see `claimstep status db`",
      "claimstep holds back this update's pod template change of cap/db (the API server refuses a pod template that mounts a volume the set does not have yet): it is kept in claimstep.io/pod-template and applied when claimstep re-creates the set; the pods keep the current template until then",
      `claimstep: This change ends in a re-create of StatefulSet cap/db once its claims are at revision ${revisionOf(desired)} (orphan delete + create; its pods and claims are kept): claim template logs added, which only a re-create does (the API server forbids editing spec.volumeClaimTemplates); claimstep.io/finalize: Recreate, written by claimstep for this change only (claimstep.io/finalize-for: ${revisionOf(desired)}; later changes roll out in place).`,
    ]);
  });

  it("a template added with no pod template change: the pod template is not touched (no hold)", () => {
    const r = review(FIXTURES[1], (o) => o.spec.volumeClaimTemplates.push(template(o, "logs")));
    const v = patched(admitStatefulSetUpdate(r));
    expect(v.patch.some((op) => op.path === "/spec/template")).toBe(false);
    expect(annotationsOf(r, v)[Keys.podTemplate]).toBeUndefined();
    expect(v.warnings.some((w) => /holds back/.test(w))).toBe(false);
  });

  it("no template added or removed: the pod template change passes untouched, as before issue 27", () => {
    const r = review(FIXTURES[1], (o) => mount(o, "data"));
    const v = patched(admitStatefulSetUpdate(r));
    const after = applyPatch(r.request.object, v.patch);
    expect(after.spec.template).toEqual(r.request.object.spec.template);
    expect(after.metadata.annotations[Keys.podTemplate]).toBeUndefined();
  });

  it("a template removed: listed in claimstep.io/remove-claim-templates, the claims kept (said so)", () => {
    const r = review(FIXTURES[1], (_o, old) => old.spec.volumeClaimTemplates.push(template(old, "logs")));
    const v = patched(admitStatefulSetUpdate(r));
    const after = applyPatch(r.request.object, v.patch);
    expect(after.spec.volumeClaimTemplates).toEqual(r.request.oldObject.spec.volumeClaimTemplates);
    expect(JSON.parse(after.metadata.annotations[Keys.templates]).map((t: any) => t.metadata.name)).toEqual(["data"]);
    expect(JSON.parse(after.metadata.annotations[Keys.removeTemplates])).toEqual(["logs"]);
    expect(v.warnings[0]).toBe(
      "claimstep will remove the claim template logs from StatefulSet cap/db: it re-creates the set without it, then replaces the pods one at a time; the claims logs-db-* are kept, labelled claimstep.io/orphaned-from=db (claimstep never deletes a claim); see `claimstep status db`",
    );
  });

  it("the removal list: names already there stay unless the request brings them back; an empty list removes the annotation", () => {
    // wal was removed already (the live set lacks it), logs is pending; the request drops cache.
    const more = review(FIXTURES[1], (o, old) => {
      for (const s of [o, old]) s.metadata.annotations[Keys.removeTemplates] = JSON.stringify(["wal", "logs"]);
      old.spec.volumeClaimTemplates.push(template(old, "logs"), template(old, "cache"));
    });
    expect(JSON.parse(annotationsOf(more, admitStatefulSetUpdate(more))[Keys.removeTemplates])).toEqual([
      "cache",
      "logs",
      "wal",
    ]);
    // The request brings both back: logs (still live) and wal (added again, reusing its claims).
    const back = review(FIXTURES[1], (o, old) => {
      for (const s of [o, old]) s.metadata.annotations[Keys.removeTemplates] = JSON.stringify(["wal", "logs"]);
      old.spec.volumeClaimTemplates.push(template(old, "logs"));
      o.spec.volumeClaimTemplates.push(template(o, "logs"), template(o, "wal"));
    });
    const v = admitStatefulSetUpdate(back);
    const after = applyPatch(back.request.object, patched(v).patch);
    expect(after.metadata.annotations).not.toHaveProperty([Keys.removeTemplates]);
    expect(patched(v).patch).toContainEqual({
      op: "remove",
      path: `/metadata/annotations/${Keys.removeTemplates.replace("/", "~1")}`,
    });
    expect(patched(v).warnings.join("\n")).toMatch(/claimstep no longer removes the claim templates logs, wal/);
    // A list the request object does not carry is not removed (a remove of a missing path fails the request).
    const absent = review(FIXTURES[1], (o, old) => {
      old.metadata.annotations[Keys.removeTemplates] = JSON.stringify(["wal"]);
      o.spec.volumeClaimTemplates.push(template(o, "wal"));
    });
    expect(patched(admitStatefulSetUpdate(absent)).patch.some((op) => op.op === "remove")).toBe(false);
  });

  it("a pending addition or removal that the request undoes (its names equal to the live ones) is cancelled, the held pod template dropped", () => {
    // logs pending addition (in the desired templates, with a held pod template); the request names only data again.
    const undoAdd = review(FIXTURES[1], (o, old) => {
      const desired = JSON.stringify([
        ...old.spec.volumeClaimTemplates.map((t: any) => ({ metadata: t.metadata, spec: t.spec })),
        { metadata: { name: "logs" }, spec: old.spec.volumeClaimTemplates[0].spec },
      ]);
      for (const s of [o, old]) {
        s.metadata.annotations[Keys.templates] = desired;
        s.metadata.annotations[Keys.podTemplate] = JSON.stringify(old.spec.template);
      }
      o.spec.template.spec.containers[0].image = "nginx:1.27";
    });
    const v = patched(admitStatefulSetUpdate(undoAdd));
    const after = applyPatch(undoAdd.request.object, v.patch);
    expect(JSON.parse(after.metadata.annotations[Keys.templates]).map((t: any) => t.metadata.name)).toEqual(["data"]);
    expect(after.metadata.annotations).not.toHaveProperty([Keys.podTemplate]);
    expect(after.spec.template.spec.containers[0].image, "the pod template change passes (no name changes)").toBe(
      "nginx:1.27",
    );
    expect(v.warnings).toContain("claimstep no longer adds the claim template logs to StatefulSet cap/db");
    expect(v.warnings.join("\n")).toMatch(/claimstep dropped the pod template it held in claimstep\.io\/pod-template/);
    // wal pending removal (the live set still has it); the request names it again.
    const undoRemove = review(FIXTURES[1], (o, old) => {
      old.spec.volumeClaimTemplates.push(template(old, "wal"));
      o.spec.volumeClaimTemplates.push(template(o, "wal"));
      const desired = JSON.stringify([{ metadata: { name: "data" }, spec: old.spec.volumeClaimTemplates[0].spec }]);
      for (const s of [o, old]) {
        s.metadata.annotations[Keys.templates] = desired;
        s.metadata.annotations[Keys.removeTemplates] = JSON.stringify(["wal"]);
      }
    });
    const w = patched(admitStatefulSetUpdate(undoRemove));
    const back = applyPatch(undoRemove.request.object, w.patch);
    expect(JSON.parse(back.metadata.annotations[Keys.templates]).map((t: any) => t.metadata.name)).toEqual([
      "data",
      "wal",
    ]);
    expect(back.metadata.annotations).not.toHaveProperty([Keys.removeTemplates]);
    expect(w.warnings).toContain(
      "claimstep no longer removes the claim template wal from StatefulSet cap/db; its claims are kept and used again",
    );
  });

  it("a set that says finalize Never: kept, and the warning names the set and what it needs", () => {
    const r = review(FIXTURES[1], (o) => {
      o.metadata.annotations[Keys.finalize] = "Never";
      o.spec.volumeClaimTemplates.push(template(o, "logs"));
    });
    const v = patched(admitStatefulSetUpdate(r));
    expect(annotationsOf(r, v)[Keys.finalize]).toBe("Never");
    expect(v.warnings.at(-1)).toBe(
      "StatefulSet cap/db says claimstep.io/finalize: Never; adding or removing a claim template needs the set re-created: the change waits until you set claimstep.io/finalize: Recreate (`kubectl annotate sts -n cap db claimstep.io/finalize=Recreate --overwrite`) or run `claimstep finalize db`",
    );
  });

  it("the same apply again (a retry) changes nothing further", () => {
    const first = review(FIXTURES[1], (o) => {
      o.spec.volumeClaimTemplates.push(template(o, "logs"));
      mount(o, "logs");
      o.spec.template.spec.containers[0].image = "nginx:1.27";
    });
    const stored = applyPatch(first.request.object, patched(admitStatefulSetUpdate(first)).patch);
    const again = structuredClone(first);
    again.request.oldObject = structuredClone(stored);
    again.request.object.metadata.annotations = { ...stored.metadata.annotations };
    const second = applyPatch(again.request.object, patched(admitStatefulSetUpdate(again)).patch);
    expect(second.spec).toEqual(stored.spec);
    expect(second.metadata.annotations).toEqual(stored.metadata.annotations);
  });

  it("ClaimsFirst: a held pod template needs no partition hold (the live pod template does not change)", () => {
    const r = review(FIXTURES[1], (o) => {
      o.spec.replicas = 3;
      o.metadata.annotations[Keys.podCoordination] = "ClaimsFirst";
      o.spec.volumeClaimTemplates.push(template(o, "logs"));
      mount(o, "logs");
    });
    const v = patched(admitStatefulSetUpdate(r));
    expect(v.patch.some((op) => op.path.startsWith("/spec/updateStrategy"))).toBe(false);
    expect(annotationsOf(r, v)[Keys.userPartition]).toBeUndefined();
  });

  it("an added template that is not valid, or a name given twice, is refused with claimstep's reason (400)", () => {
    const zero = review(FIXTURES[1], (o) => {
      const t = template(o, "logs");
      t.spec.resources.requests.storage = "0";
      o.spec.volumeClaimTemplates.push(t);
    });
    expect(admitStatefulSetUpdate(zero)).toMatchObject({
      kind: "deny",
      code: 400,
      message: expect.stringMatching(/template "logs" requests 0; storage must be positive/),
    });
    const twice = review(FIXTURES[1], (o) =>
      o.spec.volumeClaimTemplates.push(template(o, "logs"), template(o, "logs")),
    );
    expect(admitStatefulSetUpdate(twice)).toMatchObject({
      kind: "deny",
      code: 400,
      message: expect.stringMatching(/"logs" .*twice/),
    });
  });

  it("a held pod template that would bring the annotations over Kubernetes' 256 KiB is refused with the fix; just under it is held", () => {
    /** A pod template carrying `bytes` of an env value (a large pod template, as some charts render). */
    const withPodTemplate = (bytes: number) =>
      review(FIXTURES[1], (o) => {
        o.spec.volumeClaimTemplates.push(template(o, "logs"));
        mount(o, "logs");
        o.spec.template.spec.containers[0].env = [{ name: "BIG", value: "x".repeat(bytes) }];
      });
    const over = admitStatefulSetUpdate(withPodTemplate(256 * 1024));
    expect(over).toMatchObject({ kind: "deny", code: 400 });
    expect(over.kind === "deny" && over.message).toMatch(
      /^claimstep: StatefulSet cap\/db: holding back the pod template change in claimstep\.io\/pod-template \(\d+ bytes\) would bring the set's annotations to \d+ bytes, over Kubernetes' limit of 262144 bytes \(256 KiB\); nothing was written\. Fix: apply the claim template change without the pod template change first, then the pod template change once claimstep has re-created the set/,
    );
    // Well under the limit (what the last-applied copy and claimstep's annotations leave): held.
    expect(patched(admitStatefulSetUpdate(withPodTemplate(100 * 1024))).patch).toContainEqual(
      expect.objectContaining({ path: "/spec/template" }),
    );
  });

  it("the limit is the annotations' total (keys and values in UTF-8 bytes), the request's own annotations included", () => {
    const r = (filler: string) =>
      review(FIXTURES[1], (o) => {
        o.metadata.annotations["example.com/big"] = filler;
        o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
      });
    // Without claimstep's annotations the request is under the limit; with them, over it (UTF-8: "é" is 2 bytes).
    const utf8 = (x: string) => new TextEncoder().encode(x).length;
    const own = Object.entries(review().request.object.metadata.annotations as Record<string, string>).reduce(
      (n, [k, x]) => n + utf8(k) + utf8(x),
      utf8("example.com/big"),
    );
    // 40 bytes under the limit as sent (counted in UTF-16 units, half of it): claimstep's annotations take it over.
    const v = admitStatefulSetUpdate(r("é".repeat(Math.floor((256 * 1024 - own - 40) / 2))));
    expect(v).toMatchObject({ kind: "deny", code: 400 });
    expect(v.kind === "deny" && v.message).toMatch(/over Kubernetes' limit of 262144 bytes/);
    expect(admitStatefulSetUpdate(r("é".repeat(100 * 1024))).kind).toBe("patch");
  });
});

describe("every refusal answers 400 BadRequest and never says the words of an immutable field (issue 35)", () => {
  // Flux's force (fluxcd/pkg ssa/errors/immutable.go IsImmutableError) takes any 409 Conflict, any
  // 422 Invalid, or a message matching `.*is\simmutable.*` or `.*immutable\sfield.*` for an
  // immutable field, and then deletes the object (the StatefulSet, its pods, with whenDeleted:
  // Delete its claims) and applies it again; kubectl apply --force does the same on 409/422.
  // Flux's regexes are case-sensitive; these are not, to be safe.
  const forbidden = [/is\simmutable/i, /immutable\sfield/i];
  const big = (o: any, bytes: number) =>
    (o.spec.template.spec.containers[0].env = [{ name: "BIG", value: "x".repeat(bytes) }]);
  const refusals: [string, any][] = [
    [
      "a template that does not parse (no name)",
      review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].metadata = {})),
    ],
    ["storage 0", review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "0"))],
    ["no storage", review(FIXTURES[1], (o) => delete o.spec.volumeClaimTemplates[0].spec.resources.requests.storage)],
    [
      "not a quantity",
      review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "lots")),
    ],
    [
      "more than 8Ei",
      review(FIXTURES[1], (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "9Ei")),
    ],
    [
      "a name given twice in the stored and the requested set (desiredChange)",
      review(FIXTURES[1], (o, old) => {
        old.spec.volumeClaimTemplates.push(template(old, "data"));
        o.spec.volumeClaimTemplates.push(template(o, "data"));
        o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
      }),
    ],
    [
      "the requested templates over 256 KiB of annotations",
      review(FIXTURES[1], (o) => {
        o.metadata.annotations["example.com/big"] = "x".repeat(256 * 1024 - 200);
        o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
      }),
    ],
    [
      "an added template named twice",
      review(FIXTURES[1], (o) => o.spec.volumeClaimTemplates.push(template(o, "logs"), template(o, "logs"))),
    ],
    [
      "an added template of storage 0",
      review(FIXTURES[1], (o) => {
        const t = template(o, "logs");
        t.spec.resources.requests.storage = "0";
        o.spec.volumeClaimTemplates.push(t);
      }),
    ],
    [
      "a held pod template over 256 KiB of annotations",
      review(FIXTURES[1], (o) => {
        o.spec.volumeClaimTemplates.push(template(o, "logs"));
        mount(o, "logs");
        big(o, 256 * 1024);
      }),
    ],
    // What the request itself carries is said back: reworded where it would say the words.
    [
      "a quantity that says them",
      review(
        FIXTURES[1],
        (o) => (o.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "1Gi is immutable field"),
      ),
    ],
    [
      "a template name that says them",
      review(FIXTURES[1], (o) => {
        const t = template(o, "this IS Immutable, an Immutable\tField");
        t.spec.resources.requests.storage = "0";
        o.spec.volumeClaimTemplates.push(t);
      }),
    ],
  ];

  for (const [what, r] of refusals)
    it(`${what}: 400, and neither /is\\simmutable/ nor /immutable\\sfield/`, () => {
      const v = admitStatefulSetUpdate(r);
      if (v.kind !== "deny") throw new Error(`expected a refusal, got ${JSON.stringify(v).slice(0, 300)}`);
      expect(v.code).toBe(400);
      expect(DENY_CODE).toBe(400);
      expect(v.message).toMatch(/^claimstep: /);
      for (const words of forbidden) expect(v.message).not.toMatch(words);
    });

  it("the words in the request are reworded, the rest of the message kept", () => {
    const v = admitStatefulSetUpdate(refusals.at(-2)![1]);
    expect(v.kind === "deny" && v.message).toContain('invalid quantity "1Gi is unchangeable field"');
  });
});
