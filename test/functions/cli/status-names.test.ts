// Issue 39 point 5: how status and step --all pick their sets, as kubectl picks objects: `-A web`
// (that name in every namespace), `web,helmdb` (two names), -l/--selector (sent to the API
// server's list); and a listing of every namespace that RBAC forbids says to use -n.
import { describe, expect, it } from "vitest";
import { apiErrorFrom } from "../../../adapters/api-error.js";
import { main, type Target } from "../../../functions/cli.js";
import { simOf } from "../../support/cli-target.js";

// The simulated clusters `--cluster sim` keeps go to this file's state directory (test/support/state-home.ts).
const STATE_ENV = { XDG_STATE_HOME: process.env.XDG_STATE_HOME };

const capture = () => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: STATE_ENV }, out, err };
};

const run = async (argv: string[], connect?: () => Promise<Target>) => {
  const c = capture();
  const code = await main(argv, c.io, connect);
  return { code, out: c.out.text, err: c.err.text };
};

describe("status: names, -A and -l", () => {
  it("-A with a name: the sets of that name in every namespace; a name found nowhere is said, exit 1", async () => {
    const web = await run(["status", "-A", "web", "--cluster", "sim"]);
    expect(web.code, web.err).toBe(0);
    expect(web.out).toMatch(/^NAMESPACE +NAME .*\ndefault +web /);
    const nope = await run(["status", "-A", "web,nope", "--cluster", "sim"]);
    expect(nope.code).toBe(1);
    expect(nope.out).toMatch(/\ndefault +web /);
    expect(nope.err).toBe('claimstep: no opted-in StatefulSet "nope" in any namespace\n');
  });

  it("web,helmdb is two names (kubectl's comma habit); sts/web too; a name given twice is one row", async () => {
    const one = await run(["status", "web,sts/web", "--cluster", "sim", "-o", "json"]);
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse(one.out).ref).toEqual({ namespace: "default", name: "web" });
    const two = await run(["status", "web,helmdb", "--cluster", "sim"]);
    expect(two.code).toBe(1);
    expect(two.err).toMatch(/helmdb/);
    // A command that acts on one set refuses a list, before any cluster is looked for.
    const plan = await run(["plan", "web,helmdb"], () => Promise.reject(new Error("no cluster wanted")));
    expect(plan.code).toBe(1);
    expect(plan.err).toBe('claimstep: plan acts on one StatefulSet: "web,helmdb" names 2; run it once per set\n');
  });

  it("-l/--selector picks the opted-in sets by label (the API server's list); not with names", async () => {
    const all = await run(["status", "-l", "!claimstep.io/admission", "--cluster", "sim"]);
    expect(all.code, all.err).toBe(0);
    expect(all.out).toMatch(/\ndefault +web /);
    const none = await run(["status", "--selector", "app=none", "--cluster", "sim"]);
    expect(none.out).toBe("no opted-in StatefulSets with labels matching app=none\n");
    const step = await run(["step", "--all", "-l", "app=none", "--cluster", "sim", "--dry-run"]);
    expect(step.code, step.err).toBe(0);
    expect(step.out).toBe("no opted-in StatefulSets\n");
    const both = await run(["status", "web", "-l", "app=web", "--cluster", "sim"]);
    expect(both.code).toBe(1);
    expect(both.err).toMatch(/names or -l\/--selector, not both/);
    expect((await run(["plan", "web", "-l", "app=web"])).err).toMatch(/-l is not a flag of plan|not a flag of plan/);
  });

  it("the selector reaches the listing", async () => {
    const s = await simOf("grow");
    const asked: (string | undefined)[] = [];
    const connect = async (): Promise<Target> => ({
      ...s.target,
      listOptedIn: async (_ns, selector) => {
        asked.push(selector);
        return [];
      },
    });
    await run(["status", "-l", "tier in (db,cache)"], connect);
    await run(["step", "--all", "-l", "app=web"], connect);
    expect(asked).toEqual(["tier in (db,cache)", "app=web"]);
  });
});

describe("every namespace, with RBAC confined to namespaces", () => {
  const forbidden = async (): Promise<Target> => {
    const s = await simOf("grow");
    return {
      ...s.target,
      listOptedIn: async (ns) => {
        if (ns !== undefined) return [];
        throw apiErrorFrom(403, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          reason: "Forbidden",
          code: 403,
          message:
            'statefulsets.apps is forbidden: User "system:serviceaccount:db:ci" cannot list resource "statefulsets" in API group "apps" at the cluster scope',
        });
      },
    };
  };

  it("status -A and step --all -A say to use -n (exit 1)", async () => {
    const expected =
      "claimstep cannot list statefulsets in all namespaces (forbidden for system:serviceaccount:db:ci): use -n <namespace>\n";
    for (const argv of [
      ["status", "-A"],
      ["status", "-A", "web"],
      ["step", "--all", "-A"],
    ]) {
      const r = await run(argv, forbidden);
      expect(r.code, argv.join(" ")).toBe(1);
      expect(r.err, argv.join(" ")).toBe(expected);
    }
    // In a namespace it is listed as before.
    expect((await run(["status", "-n", "db"], forbidden)).code).toBe(0);
  });
});
