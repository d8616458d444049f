// Issue 33, item 4, on the status page (HTTP, the simulated cluster): the list and the set page show
// where the set stands from the step's dry run, as `claimstep status` does — a set deleted mid
// re-create listed and marked with the command that re-creates it (not dropped, not a green
// Complete), and a new desired revision NotObserved (never the previous revision's Complete).
import { afterEach, describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { main } from "../../../functions/cli.js";
import { REF, startUi, type UiServer, viewer } from "./harness.js";

let ui: UiServer | undefined;
afterEach(() => ui?.close());

const get = (path: string) => fetch(`${ui!.url}${path}`, { headers: viewer(), redirect: "manual" });

/** The text of the element carrying `data-field="<field>"` (first one), tags stripped, entities decoded. */
function field(page: string, name: string): string | undefined {
  const m = new RegExp(`data-field="${name}"[^>]*>([\\s\\S]*?)</(?:dd|td|span|code)>`).exec(page);
  return m?.[1]
    ?.replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

/** `claimstep status <args>` on the page's own simulated cluster. */
async function status(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const io = { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => {} }, env: { NO_COLOR: "1" } };
  const target = {
    label: "sim",
    namespace: "default",
    reader: ui!.sim.reader,
    writers: ui!.sim.writers,
    listOptedIn: async () => [REF],
    now: () => ui!.sim.now(),
    pause: async (ms: number) => ui!.sim.advance(ms),
  };
  const code = await main(["status", ...args], io as never, async () => target as never);
  return { code, out };
}

const DELETED =
  "StatefulSet default/web is deleted; its pods and claims are kept; `claimstep run web -n default` re-creates it";

describe("a set deleted mid re-create (sim:finalize-crash)", () => {
  it("the list keeps it, marked with the command that re-creates it; its page says so, never Complete", async () => {
    ui = await startUi({ scenario: "finalize-crash" });
    expect(ui.sim.get("statefulsets", "default", "web")).toBeUndefined();
    const list = await (await get("/ui")).text();
    expect(list).toContain('data-set="default/web"');
    expect(field(list, "phase")).toBe("Progressing");
    expect(field(list, "reason")).toBe("SetCreated");
    expect(field(list, "missing")).toContain(DELETED);
    expect(list).toContain('data-headline="1 set, 1 Progressing"');

    const res = await get("/ui/default/web");
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(field(page, "phase")).toBe("Progressing");
    expect(field(page, "reason")).toBe("SetCreated");
    expect(field(page, "message")).toContain(DELETED);
    expect(field(page, "next-action")).toMatch(/^CreateSet default\/web /);
    expect(page).not.toMatch(/data-headline="Complete/);
    const fragment = await (await get("/ui/default/web/fragment")).text();
    expect(fragment).toMatch(/^<div data-headline="Progressing SetCreated">/);

    // claimstep status says the same.
    const table = await status([]);
    expect(table.code).toBe(0);
    expect(table.out.split("\n")[1]).toMatch(/^default +web +Progressing +SetCreated +- /);
    expect(table.out).toContain(DELETED);
  });
});

describe("a new desired revision over a completed rollout", () => {
  it("the list and the page show it NotObserved, as status does, never the previous Complete", async () => {
    ui = await startUi();
    for (let i = 0; i < 60; i++) {
      const r = await ui.step(10_000);
      if (r.decision.phase === "Complete" && !r.decision.action) break;
    }
    const done = await (await get("/ui")).text();
    expect(field(done, "phase")).toBe("Complete");

    // `claimstep set` (or the webhook) writes a bigger size: nothing has stepped it yet.
    ui.sim.update("statefulsets", "default", "web", (s: any) => {
      const templates = JSON.parse(s.metadata.annotations[Keys.templates]);
      templates[0].spec.resources.requests.storage = "3Gi";
      s.metadata.annotations[Keys.templates] = JSON.stringify(templates);
    });
    const list = await (await get("/ui")).text();
    expect([field(list, "phase"), field(list, "reason")]).toEqual(["-", "NotObserved"]);
    const page = await (await get("/ui/default/web")).text();
    expect([field(page, "phase"), field(page, "reason")]).toEqual(["-", "NotObserved"]);
    expect(field(page, "message")).toMatch(
      /^no step recorded for revision (\w+) yet .*; the next step: updating data-web-2/,
    );
    const wide = (await status(["-o", "wide"])).out.split("\n")[1]!.split(/\s{2,}/);
    expect([wide[2], wide[3], wide[5]]).toEqual(["-", "NotObserved", field(list, "revision")]);
  });
});

describe("a set carrying Flux's force annotation (issue 35)", () => {
  it("the list marks it, its page and claimstep status (stderr, -o json) warn that Flux deletes it on any 422 Invalid", async () => {
    ui = await startUi();
    ui.sim.update("statefulsets", "default", "web", (s: any) => {
      s.metadata.annotations["kustomize.toolkit.fluxcd.io/force"] = "enabled";
    });
    const warning =
      /StatefulSet default\/web carries kustomize\.toolkit\.fluxcd\.io\/force: enabled: Flux deletes and re-creates this set .* on any 422 Invalid.*failurePolicy: Fail.*or remove the annotation/;
    const list = await (await get("/ui")).text();
    expect(field(list, "warning")).toBe("⚠ 1 warning");
    const page = await (await get("/ui/default/web")).text();
    const shown = /<p class="note warning" role="note" data-warning[^>]*>([^<]*)<\/p>/.exec(page)?.[1];
    expect(shown?.replace(/&#39;/g, "'")).toMatch(warning);

    let err = "";
    const io = {
      stdout: { write: () => {} },
      stderr: { write: (s: string) => void (err += s) },
      env: { NO_COLOR: "1" },
    };
    const target = {
      label: "sim",
      namespace: "default",
      reader: ui.sim.reader,
      writers: ui.sim.writers,
      listOptedIn: async () => [REF],
      now: () => ui!.sim.now(),
      pause: async (ms: number) => ui!.sim.advance(ms),
    };
    expect(await main(["status"], io as never, async () => target as never)).toBe(0);
    expect(err).toMatch(/^Warning: StatefulSet default\/web carries kustomize\.toolkit\.fluxcd\.io\/force: enabled: /);
    expect(err).toMatch(warning);
    const json = await status(["web", "-o", "json"]);
    expect(JSON.parse(json.out).warnings).toEqual([expect.stringMatching(warning)]);

    // Without the annotation: nothing.
    ui.sim.update("statefulsets", "default", "web", (s: any) => {
      delete s.metadata.annotations["kustomize.toolkit.fluxcd.io/force"];
    });
    expect(field(await (await get("/ui")).text(), "warning")).toBeUndefined();
    expect(await (await get("/ui/default/web")).text()).not.toContain("data-warning");
  });
});
