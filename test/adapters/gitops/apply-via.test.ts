import { describe, expect, it } from "vitest";
import { writerFor } from "../../../adapters/gitops/apply-via.js";
import { Keys } from "../../../core/keys.js";
import { applyViaOf } from "../../../core/policy/annotations.js";
import type { ClaimWriter } from "../../../core/ports.js";
import { makeClaim, makeSet, snapshot } from "../../core/builders.js";

const writer = (name: string): ClaimWriter => ({
  name,
  supports: ["PatchClaim"],
  proposes: false,
  apply: async () => ({ kind: "applied" }),
});

const withVia = (value?: string) => makeSet(value === undefined ? {} : { annotations: { [Keys.applyVia]: value } });

describe("applyViaOf", () => {
  it("defaults to direct and reads the annotation", () => {
    expect(applyViaOf(withVia())).toEqual({ ok: true, via: "direct" });
    expect(applyViaOf(withVia("direct"))).toEqual({ ok: true, via: "direct" });
    expect(applyViaOf(withVia("pull-request"))).toEqual({ ok: true, via: "pull-request" });
  });

  it("names the set, the value and the accepted values for anything else", () => {
    expect(applyViaOf(withVia("PullRequest"))).toEqual({
      ok: false,
      message:
        'StatefulSet default/web: annotation claimstep.io/apply-via="PullRequest" is not one of direct, pull-request: fix or remove it (absent = direct)',
    });
  });
});

describe("writerFor", () => {
  const direct = writer("direct");
  const pr = writer("pull-request");
  const snap = (value?: string) => snapshot(withVia(value), [makeClaim("data-web-0")]);

  it("picks the writer each set asks for", () => {
    const choose = writerFor({ direct, pullRequest: pr });
    expect(choose(snap())).toBe(direct);
    expect(choose(snap("direct"))).toBe(direct);
    expect(choose(snap("pull-request"))).toBe(pr);
  });

  it("says what to do when a set asks for pull requests and no repository is configured: a writer that writes nothing", async () => {
    const chosen = writerFor({ direct })(snap("pull-request"));
    expect(chosen.supports).toEqual([]);
    expect(chosen.unavailable).toMatch(
      /asks for claimstep.io\/apply-via: pull-request, but no GitOps repository is configured/,
    );
    await expect(chosen.apply(undefined as never, undefined as never).catch(() => "refused")).resolves.toBe("refused");
  });

  it("never throws for a value it does not know: the planner blocks the set (InvalidApplyVia)", () => {
    const chosen = writerFor({ direct, pullRequest: pr })(snap("PullRequest"));
    expect(chosen.supports).toEqual([]);
    expect(chosen.unavailable).toContain('claimstep.io/apply-via="PullRequest"');
  });
});
