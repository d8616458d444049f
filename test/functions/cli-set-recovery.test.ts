// Issue 36 point 7: a failed expansion's advice, tried as a new user would, on the simulated
// cluster: the class's storage provides at most 8Gi (the driver's maxStorage, as the CSI hostpath
// driver's --max-volume-size). `set --storage 4Gi` rolls out; `set --storage 20Gi` fails
// (ControllerResizeInfeasible) and the Blocked message names the way out (X1) with sizes a person
// writes; the natural next try `set --storage 4Gi` is refused naming the recovery (more than 4Gi,
// e.g. 5Gi), not "at least 20Gi" nor a byte count; `set --storage 5Gi` brings the claim back down.
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: {} }, out, err };
};

describe("a failed expansion's way out, as a new user meets it (issue 36 point 7)", () => {
  it("set 4Gi → set 20Gi (beyond the 8Gi the storage provides) → Blocked naming X1 → set 4Gi refused with the recovery → set 5Gi recovers", async () => {
    const s = await simOf("opted-out");
    s.sim.setDriver("fast", { resize: "online", modify: "ok", maxStorage: "8Gi" });
    const stepUntil = async (phases: string[]) => {
      for (let i = 0; i < 200; i++) {
        const r = await s.step();
        if (phases.includes(r.decision.phase)) return r.decision;
        s.sim.advance(10_000);
      }
      throw new Error(`never reached ${phases.join("/")}`);
    };

    expect(await main(["set", "web", "data", "--storage", "4Gi"], capture().io, s.connect)).toBe(0);
    expect(await stepUntil(["Complete"])).toMatchObject({ phase: "Complete" });

    expect(await main(["set", "web", "data", "--storage", "20Gi"], capture().io, s.connect)).toBe(0);
    const blocked = await stepUntil(["Blocked"]);
    expect(blocked).toMatchObject({ phase: "Blocked", reason: "ResizeFailed" });
    expect(blocked.message).toContain("data-web-2: resize is infeasible (ControllerResizeInfeasible)");
    expect(blocked.message).toContain(
      "To recover (X1, Kubernetes ≥ 1.34): set the desired template to more than the claim's capacity 4Gi and no more than the storage provides, e.g. claimstep set web data --storage 5Gi: claimstep lowers the claim's request from 20Gi to it; or make the storage able to provide 20Gi (the resizer retries)",
    );

    // The natural next try: back to 4Gi.
    const back = capture();
    expect(await main(["set", "web", "data", "--storage", "4Gi"], back.io, s.connect)).toBe(1);
    expect(back.err.text).toContain(
      "data-web-2's expansion to 20Gi failed (ControllerResizeInfeasible) and it stays at 4Gi: Kubernetes lowers a failed request only to more than the claim's capacity, so --storage 4Gi cannot bring it back down. Give more than 4Gi, a size the storage can provide (e.g. --storage 5Gi): claimstep then lowers the failed request to it (X1, Kubernetes ≥ 1.34)",
    );
    expect(back.err.text).not.toMatch(/4294967297|at least 20Gi|template data 4Gi/);
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.resources.requests.storage).toBe("20Gi");

    // The advice taken.
    const ok = capture();
    expect(await main(["set", "web", "data", "--storage", "5Gi"], ok.io, s.connect)).toBe(0);
    expect(ok.out.text).toContain(
      "data-web-2: its expansion to 20Gi failed (ControllerResizeInfeasible); claimstep brings it back down to 5Gi (above its capacity 4Gi)",
    );
    expect(await stepUntil(["Complete", "Blocked"])).toMatchObject({ phase: "Complete" });
    const claim = s.sim.get("persistentvolumeclaims", "default", "data-web-2") as any;
    expect(claim.spec.resources.requests.storage).toBe("5Gi");
    expect(claim.status.capacity.storage).toBe("5Gi");
  });
});
