// The set page's pictures as HTML (functions/ui/charts.tsx), without a browser: what the
// description says, and what a timeline costs per ordinal.
import { describe, expect, it } from "vitest";
import type { OrdinalTimeline, Timeline } from "../../../core/view/timeline.js";
import { DESC_ORDINALS, TimelineChart, UsageChart } from "../../../functions/ui/charts.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 0, s)).toISOString();
function timeline(n: number): Timeline {
  const ordinals: OrdinalTimeline[] = Array.from({ length: n }, (_, i) => {
    const o = n - 1 - i;
    return i < n / 2
      ? {
          ordinal: o,
          pod: `web-${o}`,
          state: "Updated",
          stage: "replaced",
          written: at(i * 30),
          resized: at(i * 30 + 20),
          replaced: at(i * 30 + 25),
        }
      : { ordinal: o, pod: `web-${o}`, state: "Pending", stage: "pending" };
  });
  return { revision: "5b48d59cf5", start: at(0), end: at(n * 15), ordinals, otherRevisions: [], pods: true };
}
const html = async (node: unknown) => String(await node);
const descOf = (page: string) => /<desc id="tl-desc">([^<]*)<\/desc>/.exec(page)?.[1] ?? "";

describe("TimelineChart", () => {
  it("describes each ordinal's times while they are few, and counts them per stage beyond", async () => {
    const few = descOf(await html(TimelineChart({ timeline: timeline(DESC_ORDINALS) })));
    expect(few).toContain("web-9: claims written 10:00:00, resized by 10:00:20, pod replaced 10:00:25.");
    expect(few).toContain("web-0: not started.");
    const many = descOf(await html(TimelineChart({ timeline: timeline(DESC_ORDINALS + 2) })));
    expect(many).toBe(
      "From 2026-11-30 10:00:00 UTC to 2026-11-30 10:03:00 UTC. 12 ordinals: 6 not started, 6 pod replaced; the table below has each one&#39;s times.",
    );
  });

  it("costs under 700 bytes of HTML per ordinal (100 ordinals; printed)", async () => {
    const one = (await html(TimelineChart({ timeline: timeline(2) }))).length;
    const hundred = (await html(TimelineChart({ timeline: timeline(100) }))).length;
    const perOrdinal = (hundred - one) / 98;
    console.log(`timeline: ${hundred} bytes for 100 ordinals (${perOrdinal.toFixed(0)} per ordinal)`);
    expect(perOrdinal).toBeLessThan(700);
  });

  it("draws nothing for a set without ordinals in scope", async () => {
    expect(TimelineChart({ timeline: { ...timeline(0), ordinals: [] } })).toBeNull();
  });
});

describe("UsageChart", () => {
  it("says why there are no bars, and names the claims with no reading", async () => {
    const page = await html(
      UsageChart({
        usage: {
          threshold: "80%",
          thresholdPercent: 80,
          bars: [],
          unread: ["data-web-0"],
          error: "Prometheus at http://p is unreachable",
        },
      }),
    );
    expect(page).toContain("Prometheus at http://p is unreachable");
    expect(page).toContain("no usage read for data-web-0");
    expect(page).not.toContain("<svg");
  });
});
