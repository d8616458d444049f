import { describe, expect, it } from "vitest";
import { ApplyViaError, applyViaOf, writerFor } from "../../../adapters/gitops/apply-via.js";
import type { ActionWriter } from "../../../core/ports.js";
import { Keys } from "../../../core/types.js";
import { makeClaim, makeSet, snapshot } from "../../core/builders.js";

const writer = (name: string): ActionWriter => ({
  name,
  supports: ["PatchClaim"],
  apply: async () => ({ kind: "applied" }),
  annotateSet: async () => {},
  recordEvents: async () => {},
});

const withVia = (value?: string) => makeSet(value === undefined ? {} : { annotations: { [Keys.applyVia]: value } });

describe("applyViaOf", () => {
  it("defaults to direct and reads the annotation", () => {
    expect(applyViaOf(withVia())).toBe("direct");
    expect(applyViaOf(withVia("direct"))).toBe("direct");
    expect(applyViaOf(withVia("pull-request"))).toBe("pull-request");
  });

  it("names the set, the value and the accepted values for anything else", () => {
    expect(() => applyViaOf(withVia("PullRequest"))).toThrow(ApplyViaError);
    expect(() => applyViaOf(withVia("PullRequest"))).toThrow(
      'StatefulSet default/web: annotation claimstep.io/apply-via="PullRequest" is not one of direct, pull-request: fix or remove it (absent = direct)',
    );
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

  it("says what to do when a set asks for pull requests and no repository is configured", () => {
    expect(() => writerFor({ direct })(snap("pull-request"))).toThrow(/asks for claimstep.io\/apply-via: pull-request, but no GitOps repository is configured/);
  });
});
