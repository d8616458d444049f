// Issue 39: the set page's Events. It shows the newest EVENTS_SHOWN with a link to all of them
// (`?events=all`, which the live part keeps), and an Event the API server recorded several times
// (events.k8s.io series: a re-create repeated five times is one Event of count 5) says so in its
// row: "SetCreated ×5", "last at <time>", not a bare count column.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_SHOWN } from "../../../functions/ui/pages.js";
import { startUi, type UiServer, viewer } from "./harness.js";

const rows = (page: string) => page.match(/<tr data-count="\d+">/g)?.length ?? 0;

describe("the set page's events", () => {
  let ui: UiServer;
  const extra = 14;

  beforeAll(async () => {
    ui = await startUi();
    const event = (name: string, at: string, more: Record<string, unknown>) =>
      ui.sim.admin.createEvent(
        {
          apiVersion: "events.k8s.io/v1",
          kind: "Event",
          metadata: { name, namespace: "default" },
          eventTime: at,
          reportingController: "claimstep.io/stepper",
          reportingInstance: "test",
          action: "Step",
          type: "Normal",
          regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: "default", name: "web" },
          ...more,
        },
        { fieldManager: "test" },
      );
    for (let i = 0; i < extra; i++)
      await event(`web-old-${i}`, `2026-11-30T09:${String(10 + i).padStart(2, "0")}:00.000000Z`, {
        reason: "ClaimUpdated",
        note: `old ${i}`,
      });
    // Five re-creates: the first at 09:50, the fifth (the series' last) at 09:58.
    await event("web-recreated", "2026-11-30T09:50:00.000000Z", {
      reason: "SetCreated",
      note: "re-created StatefulSet default/web with the desired claim templates",
      series: { count: 5, lastObservedTime: "2026-11-30T09:58:00.000000Z" },
    });
  });
  afterAll(() => ui.close());

  const get = async (path: string) => {
    const res = await fetch(`${ui.url}${path}`, { headers: viewer() });
    expect(res.status).toBe(200);
    return res.text();
  };

  it("shows the newest ones, says how many there are and links to all of them", async () => {
    const page = await get("/ui/default/web");
    const total = extra + 1;
    expect(rows(page)).toBe(EVENTS_SHOWN);
    expect(page).toContain(
      `The ${EVENTS_SHOWN} newest of ${total} events. <a href="/ui/default/web?events=all#events">Show all ${total}</a>`,
    );
    const all = await get("/ui/default/web?events=all");
    expect(rows(all)).toBe(total);
    expect(all).toContain(`<a href="/ui/default/web#events">Show the ${EVENTS_SHOWN} newest only</a>`);
    // The live part (stream and polling) follows with all of them too.
    expect(all).toContain('data-poll="/ui/default/web/fragment?events=all"');
    expect(all).toContain('data-stream="/ui/default/web/stream?events=all"');
    expect(rows(await get("/ui/default/web/fragment?events=all"))).toBe(total);
    expect(rows(await get("/ui/default/web/fragment"))).toBe(EVENTS_SHOWN);
  });

  it("says an Event recorded five times is one of five, and when the last was", async () => {
    const page = await get("/ui/default/web");
    const row = page.match(/<tr data-count="5">.*?<\/tr>/)?.[0] ?? "";
    expect(row).toContain(
      '<span class="muted">last at </span><time datetime="2026-11-30T09:58:00.000000Z">2026-11-30 09:58:00 UTC</time>',
    );
    expect(row).toContain('SetCreated <span class="times" data-field="count" title="recorded 5 times">×5</span>');
    // Once is said by nothing.
    expect(page.match(/<tr data-count="1">.*?<\/tr>/)?.[0]).not.toMatch(/×|last at/);
  });

  it("shows no link when every Event is shown", async () => {
    const fresh = await startUi();
    try {
      await fresh.step();
      const res = await fetch(`${fresh.url}/ui/default/web`, { headers: viewer() });
      const page = await res.text();
      expect(rows(page)).toBe(1);
      expect(page).not.toContain("data-events-shown");
    } finally {
      await fresh.close();
    }
  });
});
