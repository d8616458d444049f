// The set page's two pictures, drawn on the server as inline SVG (no chart library, no script):
// the rollout's timeline per ordinal (core/view/timeline.ts) and, for an autogrow set, each claim's usage
// against the threshold (core/view/usage-view.ts). Each is an image with a <title> and a <desc> that say
// in words what it shows; the timeline also has its text table. They scale to the page's width
// (viewBox, width 100%): at 390 px the text is about three quarters of its size at 480.
import type { OrdinalTimeline, Timeline, UsageView } from "../../core/view/index.js";
import { timeText } from "../../core/view/index.js";
import { Head } from "./table.js";
import { Time } from "./time.js";

/** The drawing's width in SVG units (its viewBox; it scales to the page). */
const W = 480;
/** Where the time axis starts (left of it: the pod's name) and ends. */
const X0 = 64;
const X1 = W - 10;
const ROW = 22;
/** Up to this many ordinals the picture's description says each one's times; beyond, a count per stage. */
export const DESC_ORDINALS = 10;
const TOP = 22;
// A row: the bar (resizing) on its middle line; the pod replaced, a triangle just below it, so
// that it never hides the resized mark when both are at the same time.

const ms = (t: string | undefined) => (t === undefined ? Number.NaN : Date.parse(t));
/** `10:11:45` of a timestamp (the axis shows the date once, in its labels). */
const clock = (t: string) => timeText(t).slice(11, 19);
const f1 = (n: number) => Math.round(n * 10) / 10;

const STAGE_TEXT: Record<OrdinalTimeline["stage"], string> = {
  pending: "not started",
  resizing: "claims written, resizing",
  resized: "claims resized",
  replaced: "pod replaced",
  blocked: "blocked",
};

/** One ordinal in words: `web-2: claims written 10:10:00, resized by 10:10:40, pod replaced 10:10:40.` */
function said(o: OrdinalTimeline, pods: boolean): string {
  if (o.untimed) return `${o.pod}: ${STAGE_TEXT[o.stage]} (no Event left to time it).`;
  if (!o.written) return `${o.pod}: ${STAGE_TEXT[o.stage]}.`;
  const parts = [`claims written ${clock(o.written)}`];
  if (o.resized) parts.push(`resized by ${clock(o.resized)}`);
  else parts.push(o.stage === "blocked" ? "blocked" : "resizing");
  if (pods && o.replaced) parts.push(`pod replaced ${clock(o.replaced)}`);
  return `${o.pod}: ${parts.join(", ")}.`;
}

/** Where a time falls on the time axis, in SVG units. */
type AxisX = (t: string | undefined) => number;

/** Where a time falls on the axis (`x`), once the timeline has a start and an end to draw between (`timed`). */
function axisOf(tl: Timeline): { timed: boolean; x: AxisX } {
  const start = ms(tl.start);
  const end = ms(tl.end);
  const timed = Number.isFinite(start) && Number.isFinite(end);
  const span = timed ? Math.max(end - start, 1) : 1;
  return { timed, x: (t) => f1(X0 + ((ms(t) - start) / span) * (X1 - X0)) };
}

/**
 * The picture in words: the span and each ordinal's times while they are few; past DESC_ORDINALS,
 * how many are at each stage (the table below has every time: a screen reader need not hear 100 rows).
 */
function described(tl: Timeline, timed: boolean): string {
  const counts = (Object.keys(STAGE_TEXT) as OrdinalTimeline["stage"][])
    .map((k) => [k, tl.ordinals.filter((o) => o.stage === k).length] as const)
    .filter(([, n]) => n > 0);
  return [
    timed ? `From ${timeText(tl.start!)} to ${timeText(tl.end!)}.` : "No Event times to draw.",
    ...(tl.ordinals.length <= DESC_ORDINALS
      ? tl.ordinals.map((o) => said(o, tl.pods))
      : [
          `${tl.ordinals.length} ordinals: ${counts.map(([k, n]) => `${n} ${STAGE_TEXT[k]}`).join(", ")}; the table below has each one's times.`,
        ]),
    ...(tl.otherRevisions.length ? [`Writes of other revisions (${tl.otherRevisions.join(", ")}) are left out.`] : []),
  ].join(" ");
}

/** The time axis: the first and the last time, over a line. */
const axisLine = (tl: Timeline) => (
  <g class="axis">
    <text x={X0} y={12}>
      {clock(tl.start!)}
    </text>
    <text x={X1} y={12} text-anchor="end">
      {clock(tl.end!)}
    </text>
    <line x1={X0} x2={X1} y1={TOP - 4} y2={TOP - 4} />
  </g>
);

/**
 * An ordinal's marks on its row's middle line `mid`: the bar from claims written to resized (open
 * to the end while resizing), the pod's bar from resized to replaced, and a mark at each time.
 */
function marks(o: OrdinalTimeline, mid: number, pods: boolean, x: AxisX) {
  const open = o.written !== undefined && o.resized === undefined;
  const written = x(o.written);
  const resized = x(o.resized);
  const replaced = x(o.replaced);
  return (
    <>
      <rect
        class={open ? "bar open" : "bar"}
        x={written}
        y={mid - 4}
        width={Math.max(1, f1((open ? X1 : resized) - written))}
        height={8}
      />
      {pods && o.resized ? (
        <rect
          class="bar pod"
          x={resized}
          y={mid - 2}
          width={Math.max(0, f1((o.replaced ? replaced : X1) - resized))}
          height={4}
        />
      ) : null}
      <circle data-mark="written" class="m-w" cx={written} cy={mid} r={4} />
      {o.resized ? <rect data-mark="resized" class="m-r" x={resized - 4} y={mid - 4} width={8} height={8} /> : null}
      {pods && o.replaced ? <path data-mark="replaced" class="m-p" d={`M${replaced} ${mid + 1}l5 9h-10z`} /> : null}
    </>
  );
}

/** One ordinal's row at `y`: its pod's name, then its marks, or its stage in words when there is no time to draw. */
function row(o: OrdinalTimeline, y: number, pods: boolean, timed: boolean, x: AxisX) {
  const mid = y + ROW / 2;
  return (
    <g data-row={String(o.ordinal)} data-stage={o.stage} class={`st-${o.stage}`}>
      <text x={4} y={mid + 4}>
        {o.pod}
      </text>
      {o.written && timed ? (
        marks(o, mid, pods, x)
      ) : (
        <text x={X0} y={mid + 4} class="note">
          {o.untimed ? `${STAGE_TEXT[o.stage]} (no Event left)` : STAGE_TEXT[o.stage]}
        </text>
      )}
    </g>
  );
}

/** What each mark means, and which revisions' writes are left out. */
const timelineKey = (tl: Timeline) => (
  <figcaption class="muted">
    <span class="key m-w">●</span> claims written <span class="key bar">▬</span> resizing <span class="key m-r">■</span>{" "}
    resized
    {tl.pods ? (
      <>
        {" "}
        <span class="key m-p">▲</span> pod replaced
      </>
    ) : null}
    {tl.otherRevisions.length ? <> · writes of other revisions ({tl.otherRevisions.join(", ")}) left out</> : null}
  </figcaption>
);

/** The timeline as a table: every ordinal's times. Its id keeps it open across the live updates (the page's script). */
const timelineTable = (tl: Timeline) => (
  <details id="tl-table">
    <summary>The timeline as a table</summary>
    <div class="scroll">
      <table data-timeline-table>
        <Head labels={["Pod", "Stage", "Claims written", "Resized by", "Pod replaced"]} />
        <tbody>
          {tl.ordinals.map((o) => (
            <tr data-row={String(o.ordinal)}>
              <th scope="row">{o.pod}</th>
              <td>{o.stage}</td>
              <td class="num">{o.written ? <Time value={o.written} /> : "-"}</td>
              <td class="num">{o.resized ? <Time value={o.resized} /> : "-"}</td>
              <td class="num">{o.replaced ? <Time value={o.replaced} /> : tl.pods ? "-" : "not claimstep's"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  </details>
);

/** The rollout per ordinal: the picture (title, words, axis, one row an ordinal), its key and its table. */
export function TimelineChart(props: { timeline: Timeline }) {
  const tl = props.timeline;
  if (tl.ordinals.length === 0) return null;
  const { timed, x } = axisOf(tl);
  const height = TOP + tl.ordinals.length * ROW + 8;
  return (
    <figure class="chart" data-timeline>
      <svg role="img" aria-labelledby="tl-title tl-desc" viewBox={`0 0 ${W} ${height}`} class="chart-svg">
        <title id="tl-title">{`Rollout of revision ${tl.revision}, per ordinal: claims written, resized${tl.pods ? ", pod replaced" : ""}`}</title>
        <desc id="tl-desc">{described(tl, timed)}</desc>
        {timed ? axisLine(tl) : null}
        {tl.ordinals.map((o, i) => row(o, TOP + i * ROW, tl.pods, timed, x))}
      </svg>
      {timelineKey(tl)}
      {timelineTable(tl)}
    </figure>
  );
}

const BAR_ROW = 34;

export function UsageChart(props: { usage: UsageView }) {
  const u = props.usage;
  const scale = (p: number) => f1(4 + (Math.min(p, 100) / 100) * (W - 8 - 4));
  const height = 6 + u.bars.length * BAR_ROW;
  const desc = u.bars
    .map(
      (b) =>
        `${b.claim}: ${b.percent.toFixed(1)}% of ${b.capacity} used (${b.used})${b.over ? ", at or above the threshold" : ""}.`,
    )
    .join(" ");
  return (
    <figure class="chart" data-usage>
      {u.error ? (
        <p class="error" data-usage-error>
          {u.error}
        </p>
      ) : null}
      {u.bars.length ? (
        <svg role="img" aria-labelledby="ug-title ug-desc" viewBox={`0 0 ${W} ${height}`} class="chart-svg">
          <title id="ug-title">{`Volume usage of the claims autogrow watches${u.template ? ` (template ${u.template})` : ""}, against its threshold ${u.threshold}`}</title>
          <desc id="ug-desc">{desc}</desc>
          {u.bars.map((b, i) => {
            const y = 4 + i * BAR_ROW;
            return (
              <g data-claim={b.claim} data-over={String(b.over)} class={b.over ? "over" : ""}>
                <text x={4} y={y + 11}>
                  {b.claim}
                </text>
                <text x={W - 4} y={y + 11} text-anchor="end">
                  {`${b.percent.toFixed(1)}% of ${b.capacity}`}
                </text>
                <rect class="track" x={4} y={y + 16} width={W - 12} height={10} />
                <rect data-fill class="fill" x={4} y={y + 16} width={Math.max(0, scale(b.percent) - 4)} height={10} />
              </g>
            );
          })}
          <line
            data-threshold={u.threshold}
            class="threshold"
            x1={scale(u.thresholdPercent)}
            x2={scale(u.thresholdPercent)}
            y1={16}
            y2={height}
          />
        </svg>
      ) : null}
      <figcaption class="muted">
        Autogrow raises a template once a claim reaches <strong>{u.threshold}</strong> (the dashed line)
        {u.unread.length ? `; no usage read for ${u.unread.join(", ")}` : ""}.
      </figcaption>
    </figure>
  );
}
