// The set page's per-ordinal table, highest ordinal first: each ordinal a row group of its claims,
// led by the ordinal's own cells (its pod, the pod's readiness and revision when claimstep replaces
// pods, its state).
import type { OrdinalRow } from "../../../core/view/index.js";
import { type Column, cellsOf, Head, Scroll } from "../table.js";

/** An ordinal's columns of each of its claims (after the ordinal's own: ordinal, pod, state). */
const CLAIM_COLUMNS: Column<OrdinalRow["claims"][number]>[] = [
  { label: "Claim", class: "nw wide", cell: (c) => <code>{c.claim}</code> },
  { label: "Spec", field: "spec", class: "num", cell: (c) => c.spec },
  { label: "Capacity", field: "capacity", class: "num", cell: (c) => c.capacity },
  { label: "Target", field: "target", class: "num", cell: (c) => c.target },
  { label: "VAC", field: "vac", class: "half", cell: (c) => c.vac },
  { label: "Revision", field: "revision", class: "nw half", cell: (c) => <code>{c.revision}</code> },
  {
    label: "Readiness",
    field: "readiness",
    attrs: (c) => ({ class: `wide s-${c.readiness}` }),
    cell: (c) => c.readinessText,
  },
];

function OrdinalBody(props: { o: OrdinalRow; pods: boolean }) {
  const { o, pods } = props;
  const span = Math.max(1, o.claims.length);
  const lead = [
    <th scope="rowgroup" rowspan={span} class="num" data-label="Ordinal">
      {o.ordinal}
    </th>,
    <td rowspan={span} data-field="pod" data-label="Pod">
      {o.pod}
    </td>,
    ...(pods
      ? [
          <td rowspan={span} data-field="pod-ready" data-label="Pod ready" class={`half s-${o.ready}`}>
            {o.ready}
          </td>,
          <td rowspan={span} data-field="pod-revision" data-label="Pod revision" class="half">
            <code>{o.revision}</code>
          </td>,
        ]
      : []),
    <td rowspan={span} data-field="state" data-label="State" class={`s-${o.state}`}>
      {o.state}
    </td>,
  ];
  if (o.claims.length === 0) {
    return (
      <tbody class="ord" data-ordinal={String(o.ordinal)}>
        <tr>
          {lead}
          <td colspan={7} class="muted wide">
            no claims
          </td>
        </tr>
      </tbody>
    );
  }
  return (
    <tbody class="ord" data-ordinal={String(o.ordinal)}>
      {o.claims.map((c, i) => (
        <tr data-claim={c.claim}>
          {i === 0 ? lead : null}
          {cellsOf(CLAIM_COLUMNS, c)}
        </tr>
      ))}
    </tbody>
  );
}

export function Ordinals(props: { ordinals: OrdinalRow[]; pods: boolean }) {
  const { ordinals, pods } = props;
  return (
    <>
      <h2 id="ordinals">Ordinals</h2>
      {ordinals.length === 0 ? (
        <p class="muted">No ordinals.</p>
      ) : (
        <Scroll label="Ordinals">
          <table data-ordinals class="stack">
            <caption class="skip">Per-ordinal table: claims{pods ? " and pods" : ""}, highest ordinal first</caption>
            <Head
              labels={[
                "Ordinal",
                "Pod",
                ...(pods ? ["Pod ready", "Pod revision"] : []),
                "State",
                ...CLAIM_COLUMNS.map((c) => c.label),
              ]}
            />
            {ordinals.map((o) => (
              <OrdinalBody o={o} pods={pods} />
            ))}
          </table>
        </Scroll>
      )}
    </>
  );
}
