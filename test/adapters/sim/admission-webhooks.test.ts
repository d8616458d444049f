// The simulated API server calls mutating admission webhooks as the real one does: stored
// MutatingWebhookConfigurations, rules, namespace and object selectors, matchConditions (a small
// CEL subset), the AdmissionReview v1 shaped as the fixtures, the JSONPatch applied, warnings as
// `Warning: 299` headers, failurePolicy and timeoutSeconds; then the 422 of a template change.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  applyJsonPatch,
  evaluateMatchCondition,
  JsonPatchError,
  MatchConditionError,
  selectorMatches,
  type WebhookHandler,
} from "../../../adapters/sim/admission-webhooks.js";
import {
  CLAIMSTEP_WEBHOOK_SERVER,
  claimstepWebhookConfiguration,
  installClaimstepWebhook,
} from "../../../adapters/sim/claimstep-webhook.js";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { admissionRoutes } from "../../../functions/routes/admission.js";
import { fixture, jsonFixture } from "./helpers.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const SETS = `${SIM_SERVER}/apis/apps/v1/namespaces/default/statefulsets`;
const TEMPLATES = "claimstep.io/volume-claim-templates";

type Json = Record<string, any>;

function manifest(
  storage: string,
  labels: Record<string, string> | null = { "claimstep.io/admission": "enabled" },
): Json {
  const m: Json = statefulSetManifest({
    name: "web",
    replicas: 2,
    templates: [{ name: "data", storage, storageClassName: "fast" }],
  });
  delete m.metadata.annotations;
  if (labels) m.metadata.labels = labels;
  return m;
}

async function cluster(opts: { labels?: Record<string, string> | null; v124?: boolean } = {}): Promise<SimCluster> {
  const sim = new SimCluster(opts.v124 ? { volumeAttributesClasses: false } : {});
  await sim.addStorageClass("fast", { allowVolumeExpansion: true, driver: { resize: "online", modify: "ok" } });
  await sim.createStatefulSet(manifest("1Gi", opts.labels ?? null));
  return sim;
}

interface Answer {
  code: number;
  body: Json;
  warnings: string[];
}

async function send(
  sim: SimCluster,
  method: string,
  query: string,
  body: unknown,
  contentType: string,
): Promise<Answer> {
  const res = await sim.http.fetchLike(`${SETS}/web${query}`, {
    method,
    headers: { "Content-Type": contentType },
    body: JSON.stringify(body),
  });
  const warnings = (res.headers.get("warning") ?? "").split(/,\s*(?=299 )/).filter(Boolean);
  return { code: res.status, body: (await res.json()) as Json, warnings };
}

/** `kubectl apply --server-side --force-conflicts` of a manifest. */
const apply = (sim: SimCluster, m: Json, extra = "") =>
  send(sim, "PATCH", `?fieldManager=kubectl&force=true${extra}`, m, "application/apply-patch+yaml");

const stored = (sim: SimCluster) => sim.get("statefulsets", "default", "web")!;
const storageOf = (set: Json) => set.spec.volumeClaimTemplates[0].spec.resources.requests.storage;

/** claimstep's handler, recording the reviews it was sent. */
function spy(handler: WebhookHandler = admissionRoutes().fetch) {
  const reviews: { url: string; review: Json }[] = [];
  const fetch: WebhookHandler = async (req) => {
    const text = await req.clone().text();
    reviews.push({ url: req.url, review: JSON.parse(text) });
    return handler(req);
  };
  return { reviews, fetch };
}

/** A configuration with one webhook to `https://hook.test/mutate`. */
function configuration(webhook: Json = {}, name = "test"): Json {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name: `${name}.hook.test`,
        admissionReviewVersions: ["v1"],
        clientConfig: { url: "https://hook.test/mutate" },
        rules: [
          {
            apiGroups: ["apps"],
            apiVersions: ["v1"],
            operations: ["UPDATE"],
            resources: ["statefulsets"],
            scope: "Namespaced",
          },
        ],
        failurePolicy: "Fail",
        sideEffects: "None",
        timeoutSeconds: 5,
        ...webhook,
      },
    ],
  };
}

const reviewAnswer = (req: Json, response: Json) =>
  new Response(
    JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: req.request.uid, ...response },
    }),
    { status: 200, headers: { "Content-Type": "application/json" } },
  );
const patchOf = (ops: unknown[]) => ({
  allowed: true,
  patchType: "JSONPatch",
  patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
});

describe("claimstep's webhook in the simulated cluster", () => {
  it("is the MutatingWebhookConfiguration deploy/kubernetes/admission.yaml ships (cert-manager's annotation aside)", () => {
    const docs = parseAllDocuments(readFileSync(`${root}deploy/kubernetes/admission.yaml`, "utf8")).map((d) =>
      d.toJS(),
    );
    const shipped = docs.find((d) => d?.kind === "MutatingWebhookConfiguration") as Json;
    expect(claimstepWebhookConfiguration().webhooks).toEqual(shipped.webhooks);
    expect((claimstepWebhookConfiguration() as Json).metadata.name).toBe(shipped.metadata.name);
  });

  it("an apply of a bigger template goes through it: 200, spec kept, the templates in the annotation, the warning as a Warning header; the review shaped as the real server's", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const s = spy();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, s.fetch);
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"));
    expect(r.code).toBe(200);
    expect(r.warnings).toEqual([
      '299 - "claimstep will grow data-web-* to 2Gi one ordinal at a time; see `claimstep status web`"',
      // Said before it happens: the re-create, and that the Recreate claimstep wrote is for this change only.
      expect.stringMatching(
        /^299 - "claimstep: This change ends in a re-create of StatefulSet default\/web once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claimstep\.io\/finalize: Recreate, written by claimstep for this change only/,
      ),
    ]);
    const after = stored(sim);
    expect(storageOf(after)).toBe("1Gi");
    expect(JSON.parse(after.metadata.annotations[TEMPLATES])[0].spec.resources.requests.storage).toBe("2Gi");
    expect(after.metadata.annotations["claimstep.io/finalize"]).toBe("Recreate");
    expect(after.metadata.annotations["claimstep.io/volume-claim-update-strategy"]).toBe("InPlace");
    expect(after.metadata.generation).toBe(before.metadata.generation);

    expect(s.reviews).toHaveLength(1);
    const { url, review } = s.reviews[0]!;
    expect(url).toBe("https://claimstep-webhook.claimstep.svc/v1/admission/statefulsets?timeout=5s");
    const real = jsonFixture("admission-review-sts-update-vct-1.34.json") as Json;
    expect(Object.keys(review)).toEqual(Object.keys(real));
    expect(Object.keys(review.request)).toEqual(Object.keys(real.request));
    for (const k of ["kind", "resource", "requestKind", "requestResource"])
      expect(review.request[k]).toEqual(real.request[k]);
    expect(review.request).toMatchObject({ name: "web", namespace: "default", operation: "UPDATE", dryRun: false });
    expect(review.request.options).toEqual({
      kind: "UpdateOptions",
      apiVersion: "meta.k8s.io/v1",
      fieldManager: "kubectl",
    });
    expect(review.request.userInfo.username).toEqual(expect.any(String));
    // Both objects as the server defaulted them: the claim templates as in the fixture.
    const realTemplate = real.request.object.spec.volumeClaimTemplates[0];
    for (const o of [review.request.object, review.request.oldObject]) {
      expect(o).toMatchObject({ apiVersion: "apps/v1", kind: "StatefulSet" });
      const t = o.spec.volumeClaimTemplates[0];
      expect(Object.keys(t).sort()).toEqual(Object.keys(realTemplate).sort());
      expect(t).toMatchObject({
        kind: "PersistentVolumeClaim",
        apiVersion: "v1",
        status: { phase: "Pending" },
        spec: { volumeMode: "Filesystem" },
      });
    }
    expect(storageOf(review.request.object)).toBe("2Gi");
    expect(storageOf(review.request.oldObject)).toBe("1Gi");
    expect(review.request.object.metadata.uid).toBe(before.metadata.uid);
    expect(sim.http.bugs).toEqual([]);
  });

  it("the same apply again changes nothing further (no new resourceVersion), and says the same", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    expect((await apply(sim, manifest("2Gi"))).code).toBe(200);
    const first = stored(sim);
    const again = await apply(sim, manifest("2Gi"));
    expect(again.code).toBe(200);
    expect(again.warnings).toHaveLength(2);
    expect(stored(sim).metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(stored(sim).metadata.annotations).toEqual(first.metadata.annotations);
  });

  it("a merge patch and a PUT of the templates go through it too", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const live = stored(sim);
    const put = structuredClone(live);
    put.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "3Gi";
    const r = await send(sim, "PUT", "?fieldManager=kubectl-edit", put, "application/json");
    expect(r.code).toBe(200);
    expect(storageOf(stored(sim))).toBe("1Gi");
    expect(JSON.parse(stored(sim).metadata.annotations[TEMPLATES])[0].spec.resources.requests.storage).toBe("3Gi");
    // A PUT under the old resourceVersion now conflicts.
    expect((await send(sim, "PUT", "", put, "application/json")).code).toBe(409);
    const templates = structuredClone(stored(sim).spec.volumeClaimTemplates);
    templates[0].spec.resources.requests.storage = "4Gi";
    const m = await send(
      sim,
      "PATCH",
      "",
      { spec: { volumeClaimTemplates: templates } },
      "application/merge-patch+json",
    );
    expect(m.code).toBe(200);
    expect(JSON.parse(stored(sim).metadata.annotations[TEMPLATES])[0].spec.resources.requests.storage).toBe("4Gi");
  });

  it("--dry-run (?dryRun=All): the webhook is called with dryRun true, the answer is the patched object, nothing is written", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const s = spy();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, s.fetch);
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"), "&dryRun=All");
    expect(r.code).toBe(200);
    expect(r.body.metadata.annotations[TEMPLATES]).toContain("2Gi");
    expect(r.warnings).toHaveLength(2);
    expect(s.reviews[0]!.review.request.dryRun).toBe(true);
    expect(s.reviews[0]!.review.request.options.dryRun).toEqual(["All"]);
    expect(stored(sim)).toEqual(before);
  });
});

describe("adding and removing a claim template through claimstep's webhook (issue 27)", () => {
  /** The manifest with one more claim template `logs`, and (`mount`) the container mounting it, as a `kubectl apply` adding it sends. */
  function withLogs(mount: boolean): Json {
    const m = manifest("1Gi");
    m.spec.volumeClaimTemplates.push({
      ...structuredClone(m.spec.volumeClaimTemplates[0]),
      metadata: { name: "logs" },
    });
    if (mount) m.spec.template.spec.containers[0].volumeMounts = [{ name: "logs", mountPath: "/logs" }];
    return m;
  }
  const names = (set: Json) => set.spec.volumeClaimTemplates.map((t: Json) => t.metadata.name);

  it("without the webhook: the v1.34 refusal, nothing written", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    const before = stored(sim);
    const r = await apply(sim, withLogs(true));
    expect(r.code).toBe(422);
    expect(r.body.message).toContain("updates to statefulset spec for fields other than");
    expect(stored(sim)).toEqual(before);
  });

  it("an apply adding logs and its mount: 200, the live templates and pod template kept, the desired ones in the annotations, the warnings as Warning headers", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const before = stored(sim);
    const r = await apply(sim, withLogs(true));
    expect(r.code, JSON.stringify(r.body)).toBe(200);
    const after = stored(sim);
    expect(names(after)).toEqual(["data"]);
    expect(after.spec.template).toEqual(before.spec.template);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(JSON.parse(after.metadata.annotations[TEMPLATES]).map((t: Json) => t.metadata.name)).toEqual([
      "data",
      "logs",
    ]);
    const held = JSON.parse(after.metadata.annotations["claimstep.io/pod-template"]);
    expect(held.spec.containers[0].volumeMounts).toEqual([{ name: "logs", mountPath: "/logs" }]);
    expect(after.metadata.annotations["claimstep.io/finalize"]).toBe("Recreate");
    expect(after.metadata.annotations).not.toHaveProperty(["claimstep.io/remove-claim-templates"]);
    expect(r.warnings).toEqual([
      '299 - "claimstep will add the claim template logs to StatefulSet default/web: it re-creates the set with it, then replaces the pods one at a time, lowest ordinal first, each once its new claims exist; see `claimstep status web`"',
      expect.stringMatching(/^299 - "claimstep holds back this update's pod template change of default\/web /),
      expect.stringMatching(
        /^299 - "claimstep: This change ends in a re-create of StatefulSet default\/web once its claims are at revision \w+ \(orphan delete \+ create; its pods and claims are kept\): claim template logs added, which only a re-create does/,
      ),
    ]);
    // The same apply again: nothing further.
    const again = await apply(sim, withLogs(true));
    expect(again.code).toBe(200);
    expect(stored(sim).metadata.resourceVersion).toBe(after.metadata.resourceVersion);
    expect(sim.http.bugs).toEqual([]);
  });

  it("an apply dropping wal lists it for removal, the claims kept; a later template change that brings it back takes it off the list", async () => {
    const sim = new SimCluster();
    await sim.addStorageClass("fast", { allowVolumeExpansion: true, driver: { resize: "online", modify: "ok" } });
    const two: Json = statefulSetManifest({
      name: "web",
      replicas: 2,
      templates: [
        { name: "data", storage: "1Gi", storageClassName: "fast" },
        { name: "wal", storage: "1Gi", storageClassName: "fast" },
      ],
    });
    delete two.metadata.annotations;
    two.metadata.labels = { "claimstep.io/admission": "enabled" };
    await sim.createStatefulSet(two);
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const one: Json = structuredClone(two);
    one.spec.volumeClaimTemplates = one.spec.volumeClaimTemplates.slice(0, 1);
    const r = await apply(sim, one);
    expect(r.code, JSON.stringify(r.body)).toBe(200);
    const after = stored(sim);
    expect(names(after)).toEqual(["data", "wal"]);
    expect(JSON.parse(after.metadata.annotations[TEMPLATES]).map((t: Json) => t.metadata.name)).toEqual(["data"]);
    expect(JSON.parse(after.metadata.annotations["claimstep.io/remove-claim-templates"])).toEqual(["wal"]);
    expect(r.warnings[0]).toMatch(
      /claimstep will remove the claim template wal from StatefulSet default\/web: .* the claims wal-web-\* are kept, labelled claimstep\.io\/orphaned-from=web/,
    );
    // The old manifest again: its templates equal the live ones, so the webhook is not called
    // (matchConditions) and the removal stays pending (docs/admission.md: remove the annotation).
    const same = await apply(sim, two);
    expect(same.code).toBe(200);
    expect(same.warnings).toEqual([]);
    expect(JSON.parse(stored(sim).metadata.annotations["claimstep.io/remove-claim-templates"])).toEqual(["wal"]);
    // With a template change (data 1Gi → 2Gi) it reaches claimstep, which takes wal off the list.
    const grown: Json = structuredClone(two);
    grown.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
    const back = await apply(sim, grown);
    expect(back.code, JSON.stringify(back.body)).toBe(200);
    expect(stored(sim).metadata.annotations).not.toHaveProperty(["claimstep.io/remove-claim-templates"]);
    expect(back.warnings.join("\n")).toMatch(
      /claimstep no longer removes the claim template wal from StatefulSet default\/web/,
    );
    expect(JSON.parse(stored(sim).metadata.annotations[TEMPLATES]).map((t: Json) => t.metadata.name)).toEqual([
      "data",
      "wal",
    ]);
  });
});

describe("the 422 of a template change", () => {
  it("without a webhook: the v1.34 refusal (sts-vct-update-1.34.txt), nothing written", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"));
    const real = fixture("sts-vct-update-1.34.txt");
    expect(r.code).toBe(real.code);
    expect(r.body).toEqual(
      JSON.parse(JSON.stringify(real.body).replaceAll('\\"db\\"', '\\"web\\"').replace('"name":"db"', '"name":"web"')),
    );
    expect(stored(sim)).toEqual(before);
  });

  it("on the v1.24 profile: the v1.24 refusal (sts-vct-update.txt)", async () => {
    const sim = await cluster({ v124: true, labels: { "claimstep.io/admission": "enabled" } });
    const r = await apply(sim, manifest("2Gi"));
    const real = fixture("sts-vct-update.txt");
    expect([r.code, r.body]).toEqual([real.code, real.body]);
  });

  it("a set that is not opted in: the webhook lets it pass, the API server refuses as before", async () => {
    const sim = await cluster({ labels: null });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const s = spy();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, s.fetch);
    const r = await apply(sim, manifest("2Gi", null));
    expect(r.code).toBe(422);
    expect(r.body.message).toContain("updates to statefulset spec for fields other than 'replicas', 'ordinals'");
    expect(s.reviews).toEqual([]); // neither entry's selectors match: claimstep is not even called
  });

  it("claimstep's own refusal (a template of storage 0): 400 BadRequest, never the 422 Flux's force deletes on; nothing written", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const before = stored(sim);
    const r = await apply(sim, manifest("0"));
    expect([r.code, r.body.reason], JSON.stringify(r.body)).toEqual([400, "BadRequest"]);
    expect(r.body.message).toMatch(
      /^admission webhook "statefulsets\.admission\.claimstep\.io" denied the request: claimstep: .*storage must be positive/,
    );
    expect(stored(sim)).toEqual(before);
  });
});

describe("which webhooks are called", () => {
  it("namespaceSelector: the by-namespace entry for a set of a labelled namespace", async () => {
    const sim = await cluster({ labels: null });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const s = spy();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, s.fetch);
    sim.webhooks.labelNamespace("default", { "claimstep.io/admission": "enabled" });
    const r = await apply(sim, manifest("2Gi", null));
    expect(r.code).toBe(200);
    expect(s.reviews.map((x) => x.url)).toEqual([
      "https://claimstep-webhook.claimstep.svc/v1/admission/statefulsets/by-namespace?timeout=5s",
    ]);
    expect(stored(sim).metadata.annotations[TEMPLATES]).toContain("2Gi");
  });

  it("matchConditions: an update that leaves the templates alone never reaches the webhook", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    await installClaimstepWebhook(sim, admissionRoutes().fetch);
    const s = spy();
    sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, s.fetch);
    const r = await send(sim, "PATCH", "", { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect(r.code).toBe(200);
    expect(s.reviews).toEqual([]);
    expect(stored(sim).spec.replicas).toBe(3);
  });

  it("rules and objectSelector (matchExpressions Exists / In): only matching webhooks are called, configurations in name order", async () => {
    const sim = await cluster({ labels: { tier: "db" } });
    const calls: string[] = [];
    sim.registerWebhookServer("https://hook.test", async (req) => {
      const review = (await req.json()) as Json;
      calls.push(new URL(req.url).searchParams.get("who")!);
      return reviewAnswer(review, { allowed: true });
    });
    const hook = (who: string, extra: Json) => ({
      clientConfig: { url: `https://hook.test/mutate?who=${who}` },
      ...extra,
    });
    await sim.admin.create(
      "mutatingwebhookconfigurations",
      configuration(
        hook("exists", { objectSelector: { matchExpressions: [{ key: "tier", operator: "Exists" }] } }),
        "b",
      ),
      { fieldManager: "kubectl" },
    );
    await sim.admin.create(
      "mutatingwebhookconfigurations",
      configuration(
        hook("in", {
          objectSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["db", "cache"] }] },
        }),
        "a",
      ),
      { fieldManager: "kubectl" },
    );
    await sim.admin.create(
      "mutatingwebhookconfigurations",
      configuration(hook("other-label", { objectSelector: { matchLabels: { tier: "web" } } }), "c"),
      { fieldManager: "kubectl" },
    );
    await sim.admin.create(
      "mutatingwebhookconfigurations",
      configuration(
        hook("pods", {
          rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["pods"] }],
        }),
        "d",
      ),
      { fieldManager: "kubectl" },
    );
    await sim.admin.create(
      "mutatingwebhookconfigurations",
      configuration(
        hook("create-only", {
          rules: [{ apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["statefulsets"] }],
        }),
        "e",
      ),
      { fieldManager: "kubectl" },
    );
    expect((await send(sim, "PATCH", "", { spec: { replicas: 3 } }, "application/merge-patch+json")).code).toBe(200);
    expect(calls).toEqual(["in", "exists"]);
  });

  it("selectorMatches: matchLabels and the four operators; {} matches everything", () => {
    const labels = { a: "1", b: "2" };
    expect(selectorMatches({}, labels)).toBe(true);
    expect(selectorMatches(undefined, undefined)).toBe(true);
    expect(selectorMatches({ matchLabels: { a: "1" } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { a: "2" } }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "a", operator: "NotIn", values: ["1"] }] }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: "c", operator: "NotIn", values: ["1"] }] }, labels)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "c", operator: "DoesNotExist" }] }, labels)).toBe(true);
    expect(selectorMatches({ matchExpressions: [{ key: "b", operator: "Exists" }] }, labels)).toBe(true);
  });
});

describe("matchConditions (the CEL subset)", () => {
  const vars = { object: { spec: { t: [{ a: 1, b: 2 }] } }, oldObject: { spec: { t: [{ b: 2, a: 1 }] } } };
  it("== and != of object.<path> and oldObject.<path>, maps compared by content", () => {
    expect(evaluateMatchCondition("object.spec.t != oldObject.spec.t", vars)).toBe(false);
    expect(evaluateMatchCondition("object.spec.t == oldObject.spec.t", vars)).toBe(true);
    expect(
      evaluateMatchCondition("object.spec != oldObject.spec", {
        object: { spec: { x: 1 } },
        oldObject: { spec: { x: 2 } },
      }),
    ).toBe(true);
  });
  it("anything else is an error (a missing key, another expression)", () => {
    expect(() => evaluateMatchCondition("object.spec.nope != oldObject.spec.t", vars)).toThrow(
      new MatchConditionError("no such key: nope"),
    );
    expect(() => evaluateMatchCondition("has(object.spec.nope.t)", vars)).toThrow(
      new MatchConditionError("no such key: nope"),
    );
    expect(() => evaluateMatchCondition("object.spec.t.size() > 1", vars)).toThrow(/unsupported/);
    expect(() => evaluateMatchCondition("object.spec.t || true", vars)).toThrow(/unsupported/);
    expect(() => evaluateMatchCondition("(has(object.spec.t)", vars)).toThrow(/unsupported/);
    expect(() => evaluateMatchCondition("!object.spec.t", vars)).toThrow(/no such overload/);
  });

  it("has(), !, && and ||, with CEL's error absorption (false && error, true || error)", () => {
    expect(evaluateMatchCondition("has(object.spec.t)", vars)).toBe(true);
    expect(evaluateMatchCondition("has(object.spec.nope)", vars)).toBe(false);
    expect(evaluateMatchCondition("!has(object.spec.nope) && (has(object.spec.t) || has(object.spec.x))", vars)).toBe(
      true,
    );
    expect(evaluateMatchCondition("has(object.spec.nope) && object.spec.nope != oldObject.spec.t", vars)).toBe(false);
    expect(evaluateMatchCondition("object.spec.nope != oldObject.spec.t && has(object.spec.nope)", vars)).toBe(false);
    expect(evaluateMatchCondition("object.spec.nope != oldObject.spec.t || has(object.spec.t)", vars)).toBe(true);
    expect(() => evaluateMatchCondition("object.spec.nope != oldObject.spec.t || has(object.spec.x)", vars)).toThrow(
      new MatchConditionError("no such key: nope"),
    );
    expect(evaluateMatchCondition("has(object.spec.t) == has(oldObject.spec.t)", vars)).toBe(true);
  });

  it("the shipped matchCondition: true exactly when the templates changed, never an error on a set without them", () => {
    const [expression] = (claimstepWebhookConfiguration().webhooks as Json[]).map(
      (w) => w.matchConditions[0].expression as string,
    );
    const set = (t?: unknown[]) => ({ spec: { replicas: 1, ...(t ? { volumeClaimTemplates: t } : {}) } });
    const a = [{ metadata: { name: "data" }, spec: { x: 1 } }];
    const b = [{ metadata: { name: "data" }, spec: { x: 2 } }];
    const cases: [unknown[] | undefined, unknown[] | undefined, boolean][] = [
      [undefined, undefined, false],
      [a, a, false],
      [a, b, true],
      [a, undefined, true],
      [undefined, a, true],
    ];
    for (const [object, old, want] of cases)
      expect(evaluateMatchCondition(expression!, { object: set(object), oldObject: set(old) })).toBe(want);
    // The expression without has() errs on a set without templates (the real server's 403 under Fail).
    expect(() =>
      evaluateMatchCondition("object.spec.volumeClaimTemplates != oldObject.spec.volumeClaimTemplates", {
        object: set(),
        oldObject: set(),
      }),
    ).toThrow(new MatchConditionError("no such key: volumeClaimTemplates"));
  });

  it("a matchCondition in error: failurePolicy Fail refuses with the real server's 403; Ignore goes on (here to the 422)", async () => {
    for (const [policy, code] of [
      ["Fail", 403],
      ["Ignore", 422],
    ] as const) {
      const sim = await cluster();
      sim.registerWebhookServer("https://hook.test", async () => new Response("{}"));
      await sim.admin.create(
        "mutatingwebhookconfigurations",
        configuration({
          failurePolicy: policy,
          matchConditions: [{ name: "sized", expression: "object.spec.volumeClaimTemplates.size() > 0" }],
        }),
        { fieldManager: "kubectl" },
      );
      const r = await apply(sim, manifest("2Gi"));
      expect(r.code).toBe(code);
      if (code === 403)
        expect(r.body).toMatchObject({
          reason: "Forbidden",
          message: expect.stringContaining(
            `statefulsets.apps "web" is forbidden: expression 'object.spec.volumeClaimTemplates.size() > 0' resulted in error: unsupported expression`,
          ),
          details: { name: "web", group: "apps", kind: "statefulsets" },
        });
    }
  });
});

describe("failurePolicy, timeouts, answers", () => {
  it("claimstep down (no server behind the Service), as shipped (Fail): a template edit is refused with the webhook's error, not the 422; every other update passes", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    const plain = statefulSetManifest({ name: "plain", replicas: 1, templates: [] }) as Json;
    delete plain.spec.volumeClaimTemplates;
    plain.metadata.labels = { "claimstep.io/admission": "enabled" };
    await sim.createStatefulSet(plain);
    await sim.admin.create("mutatingwebhookconfigurations", claimstepWebhookConfiguration(), {
      fieldManager: "kubectl",
    });
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"));
    expect(r.code).toBe(500);
    expect(r.body).toMatchObject({
      reason: "InternalError",
      message: expect.stringContaining('failed calling webhook "statefulsets.admission.claimstep.io"'),
    });
    expect(stored(sim)).toEqual(before);
    const merge = "application/merge-patch+json";
    expect((await send(sim, "PATCH", "", { spec: { replicas: 3 } }, merge)).code).toBe(200);
    expect((await send(sim, "PATCH", "", { metadata: { labels: { tier: "db" } } }, merge)).code).toBe(200);
    for (const body of [{ spec: { replicas: 2 } }, { metadata: { labels: { tier: "db" } } }]) {
      const res = await sim.http.fetchLike(`${SETS}/plain`, {
        method: "PATCH",
        headers: { "Content-Type": merge },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    expect(sim.get("statefulsets", "default", "plain")!.spec.replicas).toBe(2);
  });

  it("the same with failurePolicy Ignore (the planted bug of issue 35): the 422 Invalid that Flux's force answers with a delete", async () => {
    const sim = await cluster({ labels: { "claimstep.io/admission": "enabled" } });
    const config = claimstepWebhookConfiguration();
    for (const w of config.webhooks as Json[]) w.failurePolicy = "Ignore";
    await sim.admin.create("mutatingwebhookconfigurations", config, { fieldManager: "kubectl" });
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"));
    expect(r.code).toBe(422);
    expect(r.body.reason).toBe("Invalid");
    expect(stored(sim)).toEqual(before);
  });

  it('the webhook down with Fail: 500 InternalError "failed calling webhook …" as the real server words it, nothing written', async () => {
    const sim = await cluster();
    await sim.admin.create("mutatingwebhookconfigurations", configuration(), { fieldManager: "kubectl" });
    const before = stored(sim);
    const r = await apply(sim, manifest("2Gi"));
    expect(r.code).toBe(500);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'Internal error occurred: failed calling webhook "test.hook.test": failed to call webhook: Post "https://hook.test/mutate?timeout=5s": dial tcp hook.test:443: connect: connection refused',
      reason: "InternalError",
      details: {
        causes: [
          {
            message:
              'failed calling webhook "test.hook.test": failed to call webhook: Post "https://hook.test/mutate?timeout=5s": dial tcp hook.test:443: connect: connection refused',
          },
        ],
      },
      code: 500,
    });
    expect(stored(sim)).toEqual(before);
  });

  it("timeoutSeconds: a webhook that does not answer in time is a failure (context deadline exceeded)", async () => {
    const sim = await cluster();
    sim.registerWebhookServer("https://hook.test", () => new Promise<Response>(() => {}));
    await sim.admin.create("mutatingwebhookconfigurations", configuration({ timeoutSeconds: 1 }), {
      fieldManager: "kubectl",
    });
    const started = Date.now();
    const r = await apply(sim, manifest("2Gi"));
    expect(r.code).toBe(500);
    expect(r.body.message).toMatch(
      /failed to call webhook: Post "https:\/\/hook\.test\/mutate\?timeout=1s": context deadline exceeded$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("a patch that does not apply fails the request (500), whatever the failurePolicy; nothing written", async () => {
    for (const policy of ["Fail", "Ignore"]) {
      const sim = await cluster();
      sim.registerWebhookServer("https://hook.test", async (req) =>
        reviewAnswer((await req.json()) as Json, patchOf([{ op: "test", path: "/spec/replicas", value: 7 }])),
      );
      await sim.admin.create("mutatingwebhookconfigurations", configuration({ failurePolicy: policy }), {
        fieldManager: "kubectl",
      });
      const before = stored(sim);
      const r = await send(sim, "PATCH", "", { metadata: { labels: { x: "y" } } }, "application/merge-patch+json");
      expect(r.code).toBe(500);
      expect(r.body.message).toBe("Internal error occurred: testing value /spec/replicas failed: test failed");
      expect(stored(sim)).toEqual(before);
    }
  });

  it("a webhook's patch and warnings are applied and returned (any webhook, not only claimstep's)", async () => {
    const sim = await cluster();
    sim.registerWebhookServer("https://hook.test", async (req) =>
      reviewAnswer((await req.json()) as Json, {
        ...patchOf([{ op: "add", path: "/metadata/labels", value: { patched: "yes" } }]),
        warnings: ["first", 'with "quotes"'],
      }),
    );
    await sim.admin.create("mutatingwebhookconfigurations", configuration(), { fieldManager: "kubectl" });
    const r = await send(sim, "PATCH", "", { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect(r.code).toBe(200);
    expect(r.warnings).toEqual(['299 - "first"', '299 - "with \\"quotes\\""']);
    expect(stored(sim).metadata.labels).toEqual({ patched: "yes" });
  });

  it("allowed: false is the webhook's refusal (its code, else 400); a wrong uid is a failure", async () => {
    const sim = await cluster();
    let answer: (review: Json) => Response = (review) =>
      reviewAnswer(review, { allowed: false, status: { code: 403, reason: "Forbidden", message: "no" } });
    sim.registerWebhookServer("https://hook.test", async (req) => answer((await req.json()) as Json));
    await sim.admin.create("mutatingwebhookconfigurations", configuration(), { fieldManager: "kubectl" });
    const r = await send(sim, "PATCH", "", { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect([r.code, r.body.reason, r.body.message]).toEqual([
      403,
      "Forbidden",
      'admission webhook "test.hook.test" denied the request: no',
    ]);
    answer = () =>
      new Response(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: "other", allowed: true },
        }),
      );
    const wrong = await send(sim, "PATCH", "", { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect(wrong.code).toBe(500);
    expect(wrong.body.message).toContain('expected response.uid="');
  });

  it("a dry run is refused by a webhook with side effects", async () => {
    const sim = await cluster();
    sim.registerWebhookServer("https://hook.test", async (req) =>
      reviewAnswer((await req.json()) as Json, { allowed: true }),
    );
    await sim.admin.create("mutatingwebhookconfigurations", configuration({ sideEffects: "Some" }), {
      fieldManager: "kubectl",
    });
    const r = await send(sim, "PATCH", "?dryRun=All", { spec: { replicas: 3 } }, "application/merge-patch+json");
    expect([r.code, r.body.message]).toEqual([
      400,
      'admission webhook "test.hook.test" has side effects and does not support dry run',
    ]);
  });

  it("MutatingWebhookConfigurations are served like other resources: create, get, list, delete", async () => {
    const sim = await cluster();
    const base = `${SIM_SERVER}/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations`;
    const created = await sim.http.fetchLike(base, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(claimstepWebhookConfiguration()),
    });
    expect(created.status).toBe(201);
    expect(((await (await sim.http.fetchLike(`${base}/claimstep`)).json()) as Json).webhooks).toHaveLength(2);
    expect(((await (await sim.http.fetchLike(base)).json()) as Json).items.map((i: Json) => i.metadata.name)).toEqual([
      "claimstep",
    ]);
    expect((await sim.http.fetchLike(`${base}/claimstep`, { method: "DELETE" })).status).toBe(200);
    expect((await sim.http.fetchLike(`${base}/claimstep`)).status).toBe(404);
  });
});

describe("applyJsonPatch (RFC 6902)", () => {
  const doc = { a: { b: [1, 2] }, "x/y": 1 };
  it("add, replace, remove, test, move, copy; escaped tokens; the input untouched", () => {
    expect(
      applyJsonPatch(doc, [
        { op: "add", path: "/a/b/-", value: 3 },
        { op: "add", path: "/a/b/0", value: 0 },
        { op: "replace", path: "/x~1y", value: 2 },
        { op: "remove", path: "/a/b/1" },
        { op: "test", path: "/a/b", value: [0, 2, 3] },
        { op: "copy", from: "/a/b", path: "/c" },
        { op: "move", from: "/x~1y", path: "/d" },
      ]),
    ).toEqual({ a: { b: [0, 2, 3] }, c: [0, 2, 3], d: 2 });
    expect(doc).toEqual({ a: { b: [1, 2] }, "x/y": 1 });
  });
  it("refuses what does not apply", () => {
    expect(() => applyJsonPatch(doc, [{ op: "replace", path: "/nope", value: 1 }])).toThrow(JsonPatchError);
    expect(() => applyJsonPatch(doc, [{ op: "remove", path: "/a/c" }])).toThrow(JsonPatchError);
    expect(() => applyJsonPatch(doc, [{ op: "add", path: "/a/b/5", value: 1 }])).toThrow(/out of range/);
    expect(() => applyJsonPatch(doc, [{ op: "test", path: "/a/b", value: [2, 1] }])).toThrow(/test failed/);
    expect(() => applyJsonPatch(doc, [{ op: "frobnicate", path: "/a" }])).toThrow(JsonPatchError);
    expect(() => applyJsonPatch(doc, { op: "add" })).toThrow(JsonPatchError);
  });
});

describe("scenario apply", () => {
  it("the applied 2Gi template goes through claimstep's webhook into the rollout, then the re-create: Complete, the live spec at 2Gi", async () => {
    const { SCENARIOS } = await import("../../../functions/scenarios.js");
    const { runStep } = await import("../../../functions/step.js");
    const sim = await SCENARIOS.apply!.build();
    const ref = { namespace: "default", name: "web" };
    expect(storageOf(stored(sim))).toBe("1Gi");
    expect(stored(sim).metadata.annotations["claimstep.io/finalize"]).toBe("Recreate");
    let last;
    for (let i = 0; i < 200; i++) {
      last = await runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() });
      if (last.decision.phase === "Complete" && !last.decision.action && last.decision.requeueAfter === undefined)
        break;
      sim.advance(10_000);
    }
    expect(last!.decision.phase).toBe("Complete");
    const set = stored(sim);
    expect(
      set.spec.volumeClaimTemplates.map((t: Json) => [t.metadata.name, t.spec.resources.requests.storage]),
    ).toEqual([
      ["data", "2Gi"],
      ["wal", "1Gi"],
    ]);
    expect(set.metadata.annotations ?? {}).not.toHaveProperty(TEMPLATES);
    expect(
      sim
        .list("persistentvolumeclaims", "default")
        .filter((c) => c.metadata.name.startsWith("data-"))
        .map((c) => c.status.capacity.storage),
    ).toEqual(["2Gi", "2Gi", "2Gi"]);
    expect(sim.audit.filter((e) => e.verb === "delete" && e.resource === "persistentvolumeclaims")).toEqual([]);
  });
});
