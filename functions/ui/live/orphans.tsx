// The set page's claims of removed templates, kept: which pod still mounts each, and the command
// that deletes the others (docs/templates.md).
import type { Child } from "hono/jsx";
import type { SetPageView } from "../../../core/view/index.js";
import { type Column, Table } from "../table.js";

/**
 * A command to run by hand: wraps on a narrow screen; selected whole by one tap (`user-select:
 * all`), and copied by its button (the page's script shows it: no inline script under the CSP).
 */
function Command(props: { children: Child }) {
  return (
    <div class="cmd">
      {props.children}
      <button type="button" class="copy" data-copy hidden>
        Copy
      </button>
    </div>
  );
}

/** The orphans' table: one kept claim a row. */
const ORPHAN_COLUMNS: Column<NonNullable<SetPageView["orphans"]>["claims"][number]>[] = [
  { label: "Claim", class: "half", cell: (c) => <code>{c.claim}</code> },
  { label: "Template", cell: (c) => c.template },
  { label: "Mounted", class: "wide", cell: (c) => c.note },
];

export function Orphans(props: { orphans: NonNullable<SetPageView["orphans"]> }) {
  const o = props.orphans;
  return (
    <>
      <h2 id="orphans">{o.heading}</h2>
      <Table
        label="Claims of removed templates"
        attrs={{ "data-orphans": true }}
        columns={ORPHAN_COLUMNS}
        rows={o.claims}
      />
      {o.command ? (
        <>
          <p class="note">Delete the ones no pod mounts once their data is no longer needed (claimstep never does):</p>
          <Command>
            <pre data-orphans-command>
              <code>{o.command}</code>
            </pre>
          </Command>
        </>
      ) : (
        <p class="muted">Each is still mounted: once its pod restarts, this page shows the command to delete it.</p>
      )}
    </>
  );
}
