// The set page's next step: what the step would do now (planned, not written), or that it waits on
// a person.
import type { SetPageView } from "../../../core/view/index.js";
import { Phase } from "../set-fields.js";

export function NextStep(props: { next: SetPageView["next"] }) {
  const next = props.next;
  return (
    <>
      <h2 id="next">
        {next.action.startsWith("nothing until")
          ? "Next step (waiting on a person)"
          : "Next step (planned, not written)"}
      </h2>
      <dl class="facts" data-next>
        <dt>Decision</dt>
        <dd>
          <Phase phase={next.phase} /> <span data-field="next-reason">{next.reason}</span>
        </dd>
        <dt>Message</dt>
        <dd data-field="next-message" class="note">
          {next.message}
        </dd>
        <dt>Action</dt>
        <dd data-field="next-action">
          <code>{next.action}</code>
        </dd>
      </dl>
    </>
  );
}
