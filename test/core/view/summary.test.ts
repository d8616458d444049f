// Where a set stands (core/view/summary.ts), as `claimstep status`, `status --watch`, `-o json` and the
// status page show it: from the policy and the plan of the next step, never the previous
// revision's Complete; a set deleted mid re-create marked with the command that finishes it; the
// watch ends only when claimstep has nothing left to do (core/plan/decision.ts nothingLeftToDo).
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { nothingLeftToDo } from "../../../core/plan/decision.js";
import { planStep } from "../../../core/plan/plan.js";
import { keptUidsOf, recordOf } from "../../../core/plan/recreate-record.js";
import { GITOPS_KEYS } from "../../../core/policy/gitops-owner.js";
import { policyOf } from "../../../core/policy/policy.js";
import { desiredTemplates } from "../../../core/policy/templates.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import { observeSet } from "../../../core/view/recorder.js";
import { headlineOf, setWarnings, summaryOf } from "../../../core/view/summary.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../builders.js";

const FLUX_FORCE = GITOPS_KEYS.fluxForce;

const NOW = new Date("2026-11-30T10:00:00Z");
const ALL: WriterCapabilities = {
  name: "direct",
  supports: ["PatchClaim", "PatchPartition", "EvictPod", "WriteRecord", "ArmRecord", "OrphanSet", "CreateSet"],
  proposes: false,
};
const grown = () => makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "2Gi" }] });
const withStatus = (s: Snapshot, status: object, extra: Record<string, string> = {}): Snapshot => {
  const set = structuredClone(s.statefulSet);
  set.metadata.annotations = { ...set.metadata.annotations, [Keys.status]: JSON.stringify(status), ...extra };
  return { ...s, statefulSet: set };
};
/** What every surface shows of a snapshot: the step's plan (nothing written), summarized. */
const summary = (s: Snapshot, writer: WriterCapabilities = DIRECT) => {
  const policy = policyOf(s.statefulSet);
  const planned = planStep(s, NOW, writer, { policy });
  return { planned, s: summaryOf(s, planned, policy) };
};
const revisionOfSet = (s: Snapshot) => {
  const d = desiredTemplates(s.statefulSet);
  if (!d.ok) throw new Error(d.message);
  return revisionOf(d.templates);
};
/** Every claim at the desired 2Gi and ready; live templates still 1Gi. */
function complete(annotations: Record<string, string> = {}): Snapshot {
  const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }], annotations });
  const s0 = snapshot(set, []);
  const revision = revisionOfSet(s0);
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  set.metadata.generation = 1;
  set.status = { ...set.status, observedGeneration: 1 };
  return snapshot(set, claimsFor(set, { storage: "2Gi", revision }));
}
const recordedComplete = (revision: string) => ({
  phase: "Complete",
  reason: "RolloutComplete",
  message: "all 3 ordinal(s) in scope are at revision x and ready",
  revision,
  counts: { updated: 3, inFlight: 0, pending: 0, blocked: 0, total: 3 },
  since: "t1",
  observedAt: "t2",
});

describe("nothingLeftToDo", () => {
  it("only Complete with no action and no next step due", () => {
    expect(nothingLeftToDo({ phase: "Complete" })).toBe(true);
    expect(nothingLeftToDo({ phase: "Complete", requeueAfter: 2 })).toBe(false);
    expect(nothingLeftToDo({ phase: "Complete", action: { type: "DeleteRecord" } as Decision["action"] })).toBe(false);
    for (const phase of ["Progressing", "Waiting", "Blocked", "Idle"] as const)
      expect(nothingLeftToDo({ phase }), phase).toBe(false);
  });
});

describe("summaryOf and headlineOf", () => {
  it("an opted-in set never stepped: NotObserved with the plan's next step and counts, never done", () => {
    const { s } = summary(snapshot(grown(), claimsFor(grown())));
    expect(s).toMatchObject({
      optedIn: true,
      phase: "-",
      reason: "NotObserved",
      since: "-",
      observedAt: "-",
      updated: "0/3",
      observed: false,
      done: false,
      setMissing: false,
      applyMode: { mode: "direct" },
      status: null,
    });
    expect(s.revision).toBe(s.desiredRevision);
    expect(s.message).toMatch(/^no step recorded for revision \w+ yet \(.*\); the next step: updating data-web-2/);
    expect(headlineOf(s)).toEqual({ phase: "-", reason: "NotObserved", message: s.message });
  });

  it("a new desired revision over the previous revision's Complete is NotObserved, never Complete", () => {
    // The set was complete at 1Gi; `claimstep set` (or the webhook) just wrote 2Gi.
    const base = snapshot(grown(), claimsFor(grown()));
    const { s, planned } = summary(withStatus(base, recordedComplete("previous")));
    expect(planned.action?.type).toBe("PatchClaim");
    expect(s).toMatchObject({ phase: "-", reason: "NotObserved", observed: false, done: false, since: "-" });
    expect(s.observedAt).toBe("t2"); // the last step ran then
    expect(headlineOf(s).end).toBeUndefined();
  });

  it("once a step recorded the revision: the plan's phase, reason and message, since kept while they stay", () => {
    const base = snapshot(grown(), claimsFor(grown()));
    const revision = revisionOfSet(base);
    const recorded = {
      phase: "Progressing",
      reason: "ClaimUpdated",
      message: "updating data-web-2",
      revision,
      counts: { updated: 0, inFlight: 0, pending: 3, blocked: 0, total: 3 },
      since: "t1",
      observedAt: "t2",
    };
    const { s, planned } = summary(withStatus(base, recorded));
    expect(s).toMatchObject({
      phase: planned.status.phase,
      reason: planned.status.reason,
      message: planned.status.message,
      since: "t1",
      observedAt: "t2",
      observed: true,
      updated: "0/3",
    });
    expect(headlineOf(s)).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated", updated: "0/3 updated" });
  });

  it("a write the server refused stays Blocked while the plan would make it again; the watch ends blocked", () => {
    const base = snapshot(grown(), claimsFor(grown()));
    const revision = revisionOfSet(base);
    const { s } = summary(
      withStatus(base, {
        phase: "Blocked",
        reason: "QuotaExceeded",
        message: "over quota",
        revision,
        counts: { updated: 0, inFlight: 0, pending: 3, blocked: 0, total: 3 },
        since: "t1",
        observedAt: "t2",
      }),
    );
    expect(s).toMatchObject({ phase: "Blocked", reason: "QuotaExceeded", message: "over quota", since: "t1" });
    expect(headlineOf(s)).toMatchObject({ phase: "Blocked", end: "blocked", updated: "0/3 updated" });
  });

  it("Complete with nothing left to do ends a watch with 0; a re-create still to come does not", () => {
    const done = complete();
    const revision = revisionOfSet(done);
    const { s } = summary(withStatus(done, recordedComplete(revision)));
    expect(s).toMatchObject({ phase: "Complete", reason: "RolloutComplete", done: true, since: "t1", updated: "3/3" });
    expect(headlineOf(s)).toMatchObject({ phase: "Complete", end: "complete" });

    // claimstep.io/finalize: Recreate — the record, the orphan delete and the create are still to come.
    const recreate = withStatus(complete({ [Keys.finalize]: "Recreate" }), recordedComplete(revision));
    const r = summary(recreate, ALL);
    expect(nothingLeftToDo(r.planned)).toBe(false);
    expect(r.s.done).toBe(false);
    expect(headlineOf(r.s).end).toBeUndefined();
    expect(r.s.phase).not.toBe("-"); // this revision was observed: the plan says what comes next
    expect(r.s.phase).not.toBe("Complete");
  });

  it("a Complete step with a step still due is Progressing, saying what is to come", () => {
    const revision = revisionOfSet(complete());
    const base = withStatus(complete(), recordedComplete(revision));
    const planned = planStep(base, NOW, ALL);
    const due: Decision = { ...planned, requeueAfter: 2 };
    const s = summaryOf(base, due, policyOf(base.statefulSet));
    expect(s).toMatchObject({ phase: "Progressing", reason: "RolloutComplete", done: false });
    expect(s.message).toMatch(/; not done: the next step is due in 2s$/);
    // /metrics says the same of the step that decided it (claimstep_set_phase).
    expect(observeSet(base, due).phase).toBe("Progressing");
    expect(observeSet(base, planned).phase).toBe("Complete");
  });

  it("a set deleted mid re-create: listed as Progressing with the command that re-creates it, never Complete", () => {
    // The reader synthesises the set from the record's manifest, whose annotations carry the old
    // Complete: only the plan (F3, a CreateSet) says what is true.
    const base = withStatus(complete(), recordedComplete(revisionOfSet(complete())));
    const missing: Snapshot = { ...base, setMissing: true, pods: [] };
    const planned: Decision = {
      ...planStep(base, NOW, ALL),
      phase: "Progressing",
      reason: "SetCreated",
      message: "creating StatefulSet default/web from ConfigMap claimstep-recreate-web, with the new claim templates",
      action: { type: "CreateSet", namespace: "default", set: "web", manifest: base.statefulSet },
      ordinals: [],
      requeueAfter: 2,
    };
    planned.status = {
      ...planned.status,
      phase: "Progressing",
      reason: "SetCreated",
      message: planned.message,
      counts: { updated: 0, inFlight: 0, pending: 0, blocked: 0, total: 0 },
    };
    const s = summaryOf(missing, planned, policyOf(missing.statefulSet));
    expect(s).toMatchObject({ phase: "Progressing", reason: "SetCreated", setMissing: true, done: false });
    expect(s.updated).toBe("-");
    // Its pods gone and no record naming them: nothing says they were kept.
    expect(s.message).toMatch(/^StatefulSet default\/web is deleted; `claimstep run web -n default` re-creates it/);
    expect(headlineOf(s).end).toBeUndefined();
    // "kept" only when every pod and claim the record names is there with its uid.
    const record = recordOf(base.statefulSet, base.statefulSet, "r", keptUidsOf(base));
    const kept = summaryOf(
      { ...base, setMissing: true, recreateRecord: record },
      planned,
      policyOf(missing.statefulSet),
    );
    expect(kept.message).toMatch(
      /^StatefulSet default\/web is deleted; its pods and claims are kept; `claimstep run web -n default` re-creates it/,
    );
    const oneGone = summaryOf(
      { ...base, setMissing: true, recreateRecord: record, pods: base.pods.slice(1) },
      planned,
      policyOf(missing.statefulSet),
    );
    expect(oneGone.message).toMatch(
      /^StatefulSet default\/web is deleted; `claimstep run web -n default` re-creates it/,
    );

    // Its record refused: Blocked, still saying the set is gone.
    const refused = summaryOf(
      missing,
      {
        ...planned,
        phase: "Blocked",
        status: { ...planned.status, phase: "Blocked", reason: "RecordNotOurs", message: "not ours" },
      },
      policyOf(missing.statefulSet),
    );
    expect(refused).toMatchObject({ phase: "Blocked", reason: "RecordNotOurs" });
    expect(refused.message).toBe("StatefulSet default/web is deleted; not ours");
    expect(headlineOf(refused).end).toBe("blocked");
  });

  it("a set not opted in is Idle and ends a watch as blocked", () => {
    const off = makeSet({ strategy: null });
    const { s } = summary(snapshot(off, claimsFor(off)));
    expect(s).toMatchObject({ optedIn: false, strategy: "OnClaimDelete", phase: "Idle", reason: "NotOptedIn" });
    expect(headlineOf(s)).toMatchObject({ phase: "Idle", reason: "NotOptedIn", end: "blocked" });
  });

  it("pull-request mode links the pull request the writer recorded (status.pullRequest), never a URL of the message; http(s) only", () => {
    // issue 24, item 7: the link was the last URL of the message, which a driver's or admission error text chooses.
    const base = snapshot(grown(), claimsFor(grown()));
    const pr = { [Keys.applyVia]: "pull-request" };
    const link = (status: object, extra = pr) => summary(withStatus(base, status, extra)).s.applyMode;
    expect(
      link({
        phase: "Waiting",
        reason: "AwaitingApproval",
        message: "opened pull request #7; merge it — https://git.example/o/r/pull/7 (see https://evil.example/x)",
        pullRequest: "https://git.example/o/r/pull/7",
      }),
    ).toEqual({ mode: "pull-request", link: "https://git.example/o/r/pull/7" });
    expect(
      link({
        phase: "Blocked",
        reason: "ApplyRejected",
        message: "admission webhook denied it: see https://evil.example/x",
      }),
    ).toEqual({ mode: "pull-request" });
    expect(
      link({ phase: "Waiting", reason: "AwaitingApproval", message: "m", pullRequest: "javascript:alert(1)" }),
    ).toEqual({ mode: "pull-request" });
    expect(link({}, { [Keys.applyVia]: "carrier-pigeon" })).toEqual({ mode: "invalid", value: "carrier-pigeon" });
  });

  it("a status annotation that is not a JSON object is no status", () => {
    const set = grown();
    set.metadata.annotations![Keys.status] = "[1,2]";
    expect(summary(snapshot(set, claimsFor(set))).s.status).toBeNull();
  });
});

describe("warnings (issue 35)", () => {
  it("Flux's force annotation: Flux deletes and re-creates the set on any 422 Invalid; keep the webhook up (Fail) or remove the annotation", () => {
    const set = grown();
    set.metadata.annotations = { ...set.metadata.annotations, [FLUX_FORCE]: "enabled" };
    const { s } = summary(snapshot(set, claimsFor(set)));
    expect(s.warnings).toHaveLength(1);
    const [w] = s.warnings!;
    expect(w).toMatch(/^StatefulSet default\/web carries kustomize\.toolkit\.fluxcd\.io\/force: enabled: /);
    expect(w).toContain("Flux deletes and re-creates this set");
    expect(w).toContain("on any 422 Invalid");
    expect(w).toContain("failurePolicy: Fail");
    expect(w).toContain("claimstep.io/admission=enabled");
    expect(w).toContain("kubectl annotate sts web -n default kustomize.toolkit.fluxcd.io/force-");
    // Whatever the phase: the same warning on a completed set.
    const done = complete({ [FLUX_FORCE]: "Enabled" });
    expect(summary(done).s.warnings).toEqual([w]);
  });

  it("none without the annotation, or with another value (absent from the summary)", () => {
    expect(summary(snapshot(grown(), claimsFor(grown()))).s).not.toHaveProperty("warnings");
    for (const value of ["disabled", "", "true"]) {
      const set = grown();
      set.metadata.annotations = { ...set.metadata.annotations, [FLUX_FORCE]: value };
      expect(setWarnings(set), value).toEqual([]);
    }
  });
});
