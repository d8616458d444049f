// The set page's status: where the set stands (phase, reason, message, progress, times, revision,
// how it applies), then what it warns of and, once Complete, how to re-create it.
import type { SetPageView } from "../../../core/view/index.js";
import { ApplyMode, Phase, Progress } from "../set-fields.js";
import { Time } from "../time.js";

/** The headline's fields and the summary's, one term each. */
function Facts(props: { view: SetPageView }) {
  const { summary: s, headline: h } = props.view;
  return (
    <dl class="facts" data-headline-fields>
      <dt>Phase</dt>
      <dd data-field="phase">
        <Phase phase={h.phase} />
      </dd>
      <dt>Reason</dt>
      <dd data-field="reason">{h.reason}</dd>
      <dt>Message</dt>
      <dd data-field="message" class="note">
        {h.message}
      </dd>
      <dt>Progress</dt>
      <dd>
        <Progress s={s} />
      </dd>
      <dt>Since</dt>
      <dd data-field="since">
        <Time value={s.since} />
      </dd>
      <dt>Observed</dt>
      <dd data-field="observed">
        <Time value={s.observedAt} />
      </dd>
      <dt>Revision</dt>
      <dd data-field="revision">
        <code>{s.revision}</code> <span class="muted">(current: </span>
        <code data-field="current-revision">{s.currentRevision}</code>
        <span class="muted">)</span>
      </dd>
      <dt>Apply</dt>
      <dd data-field="apply">
        <ApplyMode s={s} />
      </dd>
    </dl>
  );
}

export function Status(props: { view: SetPageView }) {
  const { summary, finalizeHint } = props.view;
  return (
    <>
      <h2 id="status">Status</h2>
      <Facts view={props.view} />
      {(summary.warnings ?? []).map((w) => (
        <p class="note warning" role="note" data-warning>
          {w}
        </p>
      ))}
      {finalizeHint ? (
        <p class="note hint" data-finalize-hint>
          {finalizeHint}
        </p>
      ) : null}
    </>
  );
}
