// A set's fields as both pages show them (the list's row, the set page's status): its phase, its
// progress and how it applies a change.
import type { SetSummary } from "../../core/view/index.js";

export const Phase = (props: { phase: string }) => <span class={`phase p-${props.phase}`}>{props.phase}</span>;

export function Progress(props: { s: SetSummary }) {
  const p = props.s.progress;
  if (!p) return <span class="muted">-</span>;
  return (
    <span>
      <progress
        value={p.done}
        max={Math.max(p.total, 1)}
        aria-label={`${props.s.ref.namespace}/${props.s.ref.name}: ${p.done} of ${p.total} ordinals done`}
      >
        {p.done}/{p.total}
      </progress>{" "}
      <span data-field="updated">{props.s.updated}</span>
    </span>
  );
}

export function ApplyMode(props: { s: SetSummary }) {
  const m = props.s.applyMode;
  if (m.mode === "invalid") return <span class="error">invalid: {m.value}</span>;
  if (m.mode === "direct") return <span>direct</span>;
  return (
    <span>
      pull request
      {m.link ? (
        <>
          {" "}
          <a href={m.link} rel="noopener noreferrer">
            {m.link}
          </a>
        </>
      ) : null}
    </span>
  );
}
