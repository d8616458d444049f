// The view model every interface shows a set through (core/view/view.ts): the summary `status` and
// `/ui` print, the headline `status --watch` and the set's page print, the per-ordinal rows (with
// pods once coordinated), the next step for any action, the templates and the events.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { planStep } from "../../../core/plan/plan.js";
import { policyOf } from "../../../core/policy/policy.js";
import type { Action, OrdinalReport } from "../../../core/types.js";
import { renderTable } from "../../../core/view/render.js";
import { summaryOf } from "../../../core/view/summary.js";
import {
  actionText,
  linkIn,
  ordinalRows,
  podsCoordinated,
  recentEvents,
  setPage,
  templatesView,
} from "../../../core/view/view.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const grown = () => makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "2Gi" }] });

it("links in a message: http(s) only (the page links the recorded pull request, core/view/summary.ts)", () => {
  expect(linkIn("see javascript:alert(1)")).toBeUndefined();
  expect(linkIn('x "https://a.example/p" y')).toBe("https://a.example/p");
});

describe("the per-ordinal rows", () => {
  const report: OrdinalReport = {
    ordinal: 2,
    pod: "web-2",
    podPhase: "Running",
    podReady: false,
    podRevision: "web-abc",
    podUpdated: true,
    state: "InFlight",
    claims: [
      {
        template: "data",
        claim: "data-web-2",
        exists: true,
        spec: "2Gi",
        capacity: "1Gi",
        target: "2Gi",
        volumeAttributesClassName: { desired: "gold", current: "silver" },
        revision: "r1",
        readiness: { state: "Resizing", message: "data-web-2: the driver is resizing the volume" },
      },
    ],
  };

  it("cells shared by the text table and the page, pods with readiness and revision", () => {
    expect(ordinalRows([report])[0]).toMatchObject({
      pod: "web-2 (Running)",
      ready: "NotReady",
      revision: "web-abc (updated)",
      claims: [
        {
          spec: "2Gi",
          capacity: "1Gi",
          target: "2Gi",
          vac: "silver→gold",
          revision: "r1",
          readiness: "Resizing",
          readinessText: "Resizing: the driver is resizing the volume",
        },
      ],
    });
    const text = renderTable([report], true).split("\n");
    expect(text[0]).toMatch(/^ORDINAL\s+POD\s+POD-READY\s+POD-REVISION\s+STATE\s+CLAIM/);
    expect(text[1]).toMatch(/^2\s+web-2 \(Running\)\s+NotReady\s+web-abc \(updated\)\s+InFlight\s+data-web-2/);
    expect(renderTable([report])).not.toContain("POD-READY");
  });

  it("pods are shown once claimstep coordinates them", () => {
    const set = grown();
    expect(podsCoordinated(set)).toBe(false);
    set.metadata.annotations![Keys.podCoordination] = "ClaimsFirst";
    expect(podsCoordinated(set)).toBe(true);
  });
});

describe("the next step, templates and events", () => {
  it("one line for every kind of action", () => {
    const actions: Action[] = [
      {
        type: "PatchClaim",
        namespace: "db",
        claim: "data-web-2",
        template: "data",
        ordinal: 2,
        storage: "2Gi",
        labels: {},
        annotations: {},
      },
      { type: "PatchPartition", namespace: "db", set: "web", partition: 2, from: 3, userPartition: 0 },
      { type: "EvictPod", namespace: "db", pod: "web-2", uid: "u", ordinal: 2, claim: "data-web-2" },
    ];
    expect(actions.map(actionText)).toEqual([
      "PatchClaim db/data-web-2 storage=2Gi",
      "PatchPartition db/web partition 3 → 2 (recording the user's partition 0)",
      "EvictPod db/web-2 (ordinal 2: data-web-2 waits on its pod to finish resizing)",
    ]);
  });

  it("the re-create's, the reshape's and autogrow's actions have their own line, not `<type> in <namespace>`", () => {
    const actions: Action[] = [
      {
        type: "ArmRecord",
        namespace: "db",
        set: "web",
        name: "claimstep-recreate-web",
        armed: true,
        resourceVersion: "7",
      },
      {
        type: "ArmRecord",
        namespace: "db",
        set: "web",
        name: "claimstep-recreate-web",
        armed: false,
        resourceVersion: "8",
      },
      { type: "ProposeRecreate", namespace: "db", set: "web", revision: "abc123", templates: [] },
      { type: "LabelClaim", namespace: "db", set: "web", claim: "cache-web-0", orphanedFrom: "web" },
      { type: "LabelClaim", namespace: "db", set: "web", claim: "cache-web-0", orphanedFrom: null },
      {
        type: "RaiseTemplate",
        namespace: "db",
        set: "web",
        template: "data",
        from: "1Gi",
        to: "2Gi",
        templates: [],
        fromRevision: "a",
        toRevision: "b",
        autogrownFrom: "a",
      },
    ];
    expect(actions.map(actionText)).toEqual([
      "ArmRecord db/claimstep-recreate-web (arm the re-create record of web)",
      "ArmRecord db/claimstep-recreate-web (disarm the re-create record of web)",
      "ProposeRecreate db/web (propose the re-create at revision abc123)",
      "LabelClaim db/cache-web-0 claimstep.io/orphaned-from=web (template removed; claim kept)",
      "LabelClaim db/cache-web-0 (template back: remove claimstep.io/orphaned-from)",
      "RaiseTemplate db/web template data 1Gi → 2Gi (autogrow)",
    ]);
    for (const text of actions.map(actionText)) expect(text).not.toMatch(/ in db$/);
  });

  it("the set's page: the plan of the next step, desired vs live templates, events newest first", () => {
    const set = grown();
    const s = snapshot(set, claimsFor(set));
    const policy = policyOf(set);
    const planned = planStep(s, NOW, DIRECT, { policy });
    const summary = summaryOf(s, planned, policy);
    const events = [
      { time: "2026-11-30T10:00:00.000000Z", type: "Normal", reason: "ClaimUpdated", note: "a", count: 1 },
      { time: "2026-11-30T10:05:00.000000Z", type: "Warning", reason: "QuotaExceeded", note: "b", count: 2 },
    ];
    const page = setPage(s, planned, summary, events);
    expect(page.headline).toMatchObject({ phase: "-", reason: "NotObserved" });
    expect(page.next).toMatchObject({
      phase: "Progressing",
      reason: "ClaimUpdated",
      action: "PatchClaim default/data-web-2 storage=2Gi",
    });
    expect(page.ordinals.map((o) => o.ordinal)).toEqual([2, 1, 0]);
    expect(page.events.map((e) => e.note)).toEqual(["b", "a"]);
    expect(page.templates.source).toBe("annotation");
    expect(page.templates.templates[0]!.fields.find((f) => f.field === "storage")).toEqual({
      field: "storage",
      live: "1Gi",
      desired: "2Gi",
      changed: true,
    });
    expect(setPage(s, planned, summary, { error: "forbidden" })).toMatchObject({
      events: [],
      eventsError: "forbidden",
    });
    expect(recentEvents(events, 1).map((e) => e.note)).toEqual(["b"]);
  });

  it("an invalid templates annotation is shown with its message", () => {
    const set = grown();
    set.metadata.annotations![Keys.templates] = "{not json";
    const t = templatesView(set);
    expect(t.source).toBe("invalid");
    expect(t.error).toMatch(/is not valid JSON/);
  });

  it("a template to add and one to remove show as such, the removed one's desired values '(removed)' (issue 27)", () => {
    const set = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "cache", storage: "1Gi" },
      ],
      desired: [
        { name: "data", storage: "1Gi" },
        { name: "logs", storage: "5Gi" },
      ],
      annotations: { [Keys.removeTemplates]: JSON.stringify(["cache"]) },
    });
    const t = templatesView(set);
    expect(t.templates.map((x) => [x.name, x.change])).toEqual([
      ["data", undefined],
      ["logs", "added"],
      ["cache", "removed"],
    ]);
    const logs = t.templates.find((x) => x.name === "logs")!;
    expect(logs.fields.find((f) => f.field === "storage")).toEqual({
      field: "storage",
      live: "-",
      desired: "5Gi",
      changed: true,
    });
    expect(t.templates.find((x) => x.name === "cache")!.fields.every((f) => f.desired === "(removed)")).toBe(true);
  });
});
