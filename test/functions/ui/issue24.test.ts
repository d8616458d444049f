// The status page, issue 24 item 19 (over HTTP, no browser): after Complete it says the live
// templates differ and how to re-create; while Blocked after a refusal it shows no planned write
// the server would refuse again; the list page follows the sets by itself (a fragment it polls);
// one timestamp format on every page; and which clock the times are on when it is the simulated one.
import { afterEach, describe, expect, it } from "vitest";
import { startUi, type UiServer, viewer } from "./harness.js";

let ui: UiServer | undefined;
afterEach(async () => {
  await ui?.close();
  ui = undefined;
});

const get = async (path: string) => {
  const res = await fetch(`${ui!.url}${path}`, { headers: viewer(), redirect: "manual" });
  return { status: res.status, text: await res.text() };
};

/** The text of the first element carrying `data-field="<name>"`, tags stripped. */
const field = (page: string, name: string) =>
  new RegExp(`data-field="${name}"[^>]*>([\\s\\S]*?)</(?:dd|td|span|code|p)>`)
    .exec(page)?.[1]
    ?.replace(/<[^>]+>/g, "")
    .trim();

/** Steps default/web until its recorded phase is `phase` (bounded). */
async function stepUntil(phase: string, limit = 80) {
  for (let i = 0; i < limit; i++) {
    const r = await ui!.step(20_000);
    if (r.decision.phase === phase) return r;
  }
  throw new Error(`default/web never reached ${phase} in ${limit} steps`);
}

describe("the status page after a rollout (issue 24)", () => {
  it("says, once Complete, that the live templates differ and how to re-create the set (claimstep finalize)", async () => {
    ui = await startUi();
    await stepUntil("Complete");
    const page = (await get("/ui/default/web")).text;
    expect(field(page, "phase")).toBe("Complete");
    const hint = /<p[^>]*data-finalize-hint[^>]*>([\s\S]*?)<\/p>/.exec(page)?.[1]?.replace(/<[^>]+>/g, "");
    expect(hint).toBeDefined();
    expect(hint).toMatch(/live spec\.volumeClaimTemplates still differ/);
    expect(hint).toContain("claimstep finalize web -n default");
    expect(hint).toContain("claimstep.io/finalize: Recreate");
  });

  it("says nothing of re-creating while the rollout runs", async () => {
    ui = await startUi();
    await ui.step();
    expect((await get("/ui/default/web")).text).not.toContain("data-finalize-hint");
  });
});

describe("the status page while Blocked by a refused write (issue 24)", () => {
  it("shows no planned write the server refused: the next step waits on the cause, naming it", async () => {
    ui = await startUi({ scenario: "quota" });
    const r = await stepUntil("Blocked");
    expect(r.decision.reason).toBe("QuotaExceeded");
    const page = (await get("/ui/default/web")).text;
    expect(field(page, "phase")).toBe("Blocked");
    expect(field(page, "next-action")).not.toMatch(/PatchClaim/);
    expect(field(page, "next-action")).toMatch(/^nothing/);
    expect(field(page, "next-reason")).toBe("QuotaExceeded");
    expect(field(page, "next-message")).toMatch(/refused/);
    expect(page).not.toMatch(/Next step \(planned, not written\)[\s\S]*Progressing/);
  });
});

describe("the list page (issue 24)", () => {
  it("follows the sets by itself: a live region polling a fragment of the list, which changes as the cluster moves", async () => {
    ui = await startUi();
    const page = (await get("/ui")).text;
    const poll = /<section[^>]*id="live"[^>]*data-poll="([^"]+)"/.exec(page)?.[1];
    expect(poll).toBe("/ui/sets");
    expect(page).toContain('<script src="/ui/app.js"');
    const before = await get(poll!);
    expect(before.status).toBe(200);
    expect(before.text).toContain('data-set="default/web"');
    await ui.step();
    const after = await get(poll!);
    expect(field(after.text, "reason")).toBe("ClaimUpdated");
    expect(after.text).not.toBe(before.text);
  });

  it("the list's fragment needs a viewer token", async () => {
    ui = await startUi();
    const res = await fetch(`${ui.url}/ui/sets`, { redirect: "manual" });
    expect(res.status).toBe(401);
  });
});

describe("times on the pages (issue 24)", () => {
  const FORMAT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;
  const times = (page: string) =>
    [...page.matchAll(/<time datetime="([^"]+)"[^>]*>([^<]*)<\/time>/g)].map((m) => ({ iso: m[1]!, text: m[2]! }));

  it("one format on every page: since, observed and the events' times", async () => {
    ui = await startUi();
    await ui.step();
    const list = times((await get("/ui")).text);
    const set = times((await get("/ui/default/web")).text);
    expect(list.length).toBeGreaterThanOrEqual(1);
    expect(set.length).toBeGreaterThanOrEqual(3); // since, observed, one event at least
    for (const t of [...list, ...set]) {
      expect(t.text).toMatch(FORMAT);
      expect(`${new Date(t.iso).toISOString().slice(0, 19).replace("T", " ")} UTC`).toBe(t.text);
    }
  });

  it("say they are on the simulated cluster's clock when they are, and not otherwise", async () => {
    ui = await startUi({ clock: "simulated" });
    await ui.step();
    for (const path of ["/ui", "/ui/default/web"])
      expect(/<p[^>]*data-clock[^>]*>([^<]*)/.exec((await get(path)).text)?.[1]).toMatch(
        /simulated cluster(&#39;|')s clock/,
      );
    await ui.close();
    ui = await startUi();
    expect((await get("/ui")).text).not.toContain("data-clock");
  });
});
