// Issue 37 item 1: one unauthenticated AdmissionReview of 20,000 + 20,000 claim templates held the
// server for seconds (template lists compared with includes/find in loops). What no set Kubernetes
// can store carries (ADMISSION_CAPS) is refused before any template is read; just under the caps, a
// hostile review is answered as any other; and the lookups by name answer as the lists did.
// Timing is the benchmark's (bench/b8-admission.ts), not asserted here.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ADMISSION_CAPS,
  ADMISSION_LABEL,
  type AdmissionVerdict,
  admitStatefulSetUpdate,
  DENY_CODE,
} from "../../../core/change/admission.js";
import { Keys } from "../../../core/keys.js";
import { fixtureJson } from "../../fixtures/apiserver.js";

const FIXTURE = "admission-review-sts-update-vct-1.34.json";

/** The smallest claim template the API server accepts (a name, one access mode, a storage request). */
const template = (name: string, storage = "1Gi") => ({
  metadata: { name },
  spec: { accessModes: ["ReadOnlyMany"], resources: { requests: { storage } } },
});

/** A template no code may read: any property access throws (the caps count, they never look inside). */
const untouchable = (): object =>
  new Proxy(
    {},
    {
      get(_t, key) {
        if (key === "toJSON" || typeof key === "symbol") return undefined;
        throw new Error(`a template's ${String(key)} was read: the comparison ran`);
      },
      ownKeys() {
        throw new Error("a template's keys were read: the comparison ran");
      },
    },
  );

/** The v1.34 review with `object` and `old` claim templates (and whatever `change` does), opted in unless told. */
function review(object: unknown[], old: unknown[], change: (o: any, old: any) => void = () => {}, optIn = true): any {
  const r = structuredClone(fixtureJson(FIXTURE)) as any;
  if (optIn) r.request.object.metadata.labels = { ...r.request.object.metadata.labels, [ADMISSION_LABEL]: "enabled" };
  r.request.object.spec.volumeClaimTemplates = object;
  r.request.oldObject.spec.volumeClaimTemplates = old;
  change(r.request.object, r.request.oldObject);
  return r;
}

const denied = (v: AdmissionVerdict) => {
  if (v.kind !== "deny") throw new Error(`expected a refusal, got ${JSON.stringify(v).slice(0, 300)}`);
  return v;
};

describe("ADMISSION_CAPS: what no storable set exceeds is refused before any template is read (issue 37)", () => {
  it("the figures follow from Kubernetes' limits as their comment says", () => {
    // No more templates than the smallest valid one fits 256 KiB of annotations (with its comma).
    const smallest = JSON.stringify(template("a", "1")).length + 1;
    expect(smallest).toBe(107);
    expect(ADMISSION_CAPS.templates).toBe(Math.floor(ADMISSION_CAPS.annotationsBytes / smallest));
    expect(ADMISSION_CAPS.annotationsBytes).toBe(256 * 1024);
    // Stored templates: etcd held 18,960 of the smallest on v1.34.2; the cap is above that.
    expect(ADMISSION_CAPS.storedTemplates).toBeGreaterThan(18_960);
  });

  it("20,000 + 20,000 templates: refused (400) naming the set, the count and the cap, no template read", () => {
    const r = review(Array.from({ length: 20_000 }, untouchable), Array.from({ length: 20_000 }, untouchable));
    const v = denied(admitStatefulSetUpdate(r));
    expect(v.uid).toBe(r.request.uid);
    expect(v.code).toBe(DENY_CODE);
    expect(v.message).toContain("StatefulSet cap/db");
    expect(v.message).toContain("20000 claim templates");
    expect(v.message).toContain(`cap of ${ADMISSION_CAPS.templates}`);
    expect(v.message).toContain("Kubernetes could not store such a set");
  });

  it("over the stored set's cap (oldObject), over the containers' cap, over 256 KiB of annotations: refused alike", () => {
    const stored = denied(
      admitStatefulSetUpdate(
        review([template("data", "3Gi")], Array.from({ length: ADMISSION_CAPS.storedTemplates + 1 }, untouchable)),
      ),
    );
    expect(stored.message).toContain(
      `the stored set (oldObject) carries ${ADMISSION_CAPS.storedTemplates + 1} claim templates`,
    );
    expect(stored.message).toContain(`cap of ${ADMISSION_CAPS.storedTemplates}`);

    const containers = denied(
      admitStatefulSetUpdate(
        review([template("data", "3Gi")], [template("data")], (o) => {
          o.spec.template.spec.containers = Array.from({ length: ADMISSION_CAPS.containers + 1 }, untouchable);
        }),
      ),
    );
    expect(containers.message).toContain(`${ADMISSION_CAPS.containers + 1} containers`);

    const annotations = denied(
      admitStatefulSetUpdate(
        review([template("data", "3Gi")], [template("data")], (_o, old) => {
          old.metadata.annotations = { big: "x".repeat(ADMISSION_CAPS.annotationsBytes) };
        }),
      ),
    );
    expect(annotations.message).toMatch(/the stored set \(oldObject\) carries 262147 bytes of annotations/);
    for (const v of [stored, containers, annotations]) {
      expect(v.code).toBe(DENY_CODE);
      expect(v.message).toContain("Kubernetes could not store such a set");
    }
  });

  it("a set that is not opted in passes untouched, however large (claimstep has nothing to change in it)", () => {
    const r = review(
      Array.from({ length: 20_000 }, untouchable),
      Array.from({ length: 20_000 }, untouchable),
      () => {},
      false,
    );
    expect(admitStatefulSetUpdate(r)).toEqual({ kind: "pass", uid: r.request.uid, why: "NotOptedIn", warnings: [] });
  });

  it("just under the caps, a hostile review is answered as any other: over 256 KiB once written, refused with the fix", () => {
    const names = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i.toString(36)}`);
    const object = names(ADMISSION_CAPS.templates, "n").map((n) => template(n, "2Gi"));
    const old = names(ADMISSION_CAPS.storedTemplates, "t").map((n) => template(n));
    const v = denied(admitStatefulSetUpdate(review(object, old)));
    expect(v.message).toContain(`writing the requested claim templates into ${Keys.templates}`);
    expect(v.message).toContain("over Kubernetes' limit of 262144 bytes");
  });

  it("just under the caps, an update that fits is patched: every removal listed, every addition said", () => {
    // 19,000 stored templates of which the update keeps 200 (grown) and adds 100.
    const stored = Array.from({ length: 19_000 }, (_, i) => template(`t${i}`));
    const kept = stored.slice(0, 200).map((t) => template(t.metadata.name, "2Gi"));
    const added = Array.from({ length: 100 }, (_, i) => template(`n${i}`, "1Gi"));
    const v = admitStatefulSetUpdate(review([...kept, ...added], stored));
    if (v.kind !== "patch") throw new Error(`expected a patch, got ${JSON.stringify(v).slice(0, 400)}`);
    const annotations = Object.fromEntries(
      v.patch
        .filter((op) => op.op === "add" && op.path.startsWith("/metadata/annotations/"))
        .map((op) => [
          op.path.slice("/metadata/annotations/".length).replace(/~1/g, "/"),
          (op as { value: string }).value,
        ]),
    );
    expect(JSON.parse(annotations[Keys.templates]!)).toHaveLength(300);
    expect(JSON.parse(annotations[Keys.removeTemplates]!)).toHaveLength(18_800);
    expect(v.warnings.filter((w) => w.startsWith("claimstep will grow "))).toHaveLength(200);
    expect(v.warnings.some((w) => w.startsWith("claimstep will add the claim templates n0, n1,"))).toBe(true);
  });
});

describe("lookups by name answer as the lists did (property)", () => {
  const name = fc.constantFrom("a", "b", "c", "d", "e", "f");
  const size = fc.constantFrom("1Gi", "2Gi", "3Gi");
  const templates = fc.uniqueArray(fc.record({ name, size }), { selector: (t) => t.name, maxLength: 6 });

  it("added, removed, grown, shrunk: as includes/find over the lists say", () => {
    fc.assert(
      fc.property(templates, templates, (requested, live) => {
        const v = admitStatefulSetUpdate(
          review(
            requested.map((t) => template(t.name, t.size)),
            live.map((t) => template(t.name, t.size)),
          ),
        );
        // The reference: the quadratic comparisons the webhook made before issue 37.
        const liveNames = live.map((t) => t.name);
        const wanted = requested.map((t) => t.name);
        const added = wanted.filter((n) => !liveNames.includes(n));
        const dropped = liveNames.filter((n) => !wanted.includes(n));
        const grown = requested.filter((d) => {
          const s = live.find((t) => t.name === d.name);
          return s !== undefined && s.size < d.size;
        });
        const shrunk = requested.filter((d) => {
          const s = live.find((t) => t.name === d.name);
          return s !== undefined && s.size > d.size;
        });
        const unchanged = added.length === 0 && dropped.length === 0 && grown.length === 0 && shrunk.length === 0;
        if (unchanged && wanted.join() === liveNames.join()) {
          expect(v.kind).toBe("pass");
          return;
        }
        // The same templates in another order are a change of spec.volumeClaimTemplates too (the API
        // server refuses it): the webhook may take it over, saying nothing of sizes or names.
        if (unchanged && v.kind === "pass") return;
        if (v.kind !== "patch") throw new Error(`expected a patch, got ${JSON.stringify(v)}`);
        const said = (prefix: string) => v.warnings.filter((w) => w.startsWith(prefix));
        expect(said("claimstep will grow ")).toHaveLength(grown.length);
        expect(said("claimstep: ").filter((w) => w.includes("never shrink"))).toHaveLength(shrunk.length);
        expect(said("claimstep will add ").map((w) => w.split(" to StatefulSet")[0])).toEqual(
          added.length
            ? [`claimstep will add the claim template${added.length === 1 ? "" : "s"} ${added.join(", ")}`]
            : [],
        );
        expect(said("claimstep will remove ").map((w) => w.split(" from StatefulSet")[0])).toEqual(
          dropped.length
            ? [`claimstep will remove the claim template${dropped.length === 1 ? "" : "s"} ${dropped.join(", ")}`]
            : [],
        );
      }),
      {
        numRuns: 300,
        // Found by a run: the same templates in another order (the reference said "pass").
        examples: [
          [
            [
              { name: "d", size: "2Gi" },
              { name: "a", size: "2Gi" },
            ],
            [
              { name: "a", size: "2Gi" },
              { name: "d", size: "2Gi" },
            ],
          ],
        ],
      },
    );
  });
});
