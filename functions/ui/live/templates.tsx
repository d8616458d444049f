// The set page's claim templates: where the desired ones come from, and each template's fields,
// desired beside live.
import type { SetPageView } from "../../../core/view/index.js";
import { type Column, Table } from "../table.js";

type TemplatesView = SetPageView["templates"];
type TemplateField = TemplatesView["templates"][number]["fields"][number];

/** A template's table: one field a row, live beside desired. */
const TEMPLATE_COLUMNS: Column<TemplateField>[] = [
  { label: "Field", rowHeader: true, class: "wide", cell: (f) => f.field },
  { label: "Live", class: "half", cell: (f) => f.live },
  {
    label: "Desired",
    class: "half",
    cell: (f) => (
      <>
        {f.desired}
        {f.changed ? <span class="muted"> (changed)</span> : null}
      </>
    ),
  },
];

/** One template's table, captioned with what the next re-create does to it. */
const TemplateTable = (props: { t: TemplatesView["templates"][number] }) => {
  const t = props.t;
  return (
    <Table
      label={`Template ${t.name}: desired vs live`}
      attrs={{ "data-template": t.name }}
      caption={
        <caption>
          Template <code>{t.name}</code>
          {t.change === "added"
            ? " (added by the next re-create)"
            : t.change === "removed"
              ? " (removed by the next re-create; its claims are kept)"
              : null}
        </caption>
      }
      columns={TEMPLATE_COLUMNS}
      rows={t.fields}
      row={(f) => ({ class: f.changed ? "changed" : "" })}
    />
  );
};

export function Templates(props: { templates: TemplatesView }) {
  const templates = props.templates;
  return (
    <>
      <h2 id="templates">Claim templates: desired vs live</h2>
      <p class="muted" data-templates-source>
        Desired templates from{" "}
        {templates.source === "annotation"
          ? "the claimstep.io/volume-claim-templates annotation"
          : templates.source === "spec"
            ? "the live spec (no annotation)"
            : "an invalid annotation"}
        .
      </p>
      {templates.error ? (
        <p class="error" data-templates-error>
          {templates.error}
        </p>
      ) : null}
      {templates.templates.map((t) => (
        <TemplateTable t={t} />
      ))}
    </>
  );
}
