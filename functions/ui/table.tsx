// The status page's tables: a header row of column labels, and each row's cells labelled by their
// column (`data-label`), which the stacked layout below 600 px shows beside each value (assets.ts).
import type { Child } from "hono/jsx";

type Attributes = Record<string, string | boolean | undefined>;

/** A column: its label (header and `data-label`), each row's cell and the cell's attributes. */
export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
  /** `data-field`: the live view's script and the tests find the cell by it. */
  field?: string;
  class?: string;
  /** More attributes of the cell, after its label (a class here replaces the column's). */
  attrs?: (row: T) => Attributes;
  /** The row's header (`th scope="row"`), unlabelled. */
  rowHeader?: boolean;
}

/**
 * A wide table scrolls by itself, the page does not. Below 600 px a table of class `stack` is
 * stacked rows instead (each cell labelled by its `data-label`: assets.ts), which never overflow;
 * one that does (the timeline's) is made a tab stop by the script, to be scrolled from the keyboard.
 */
export const Scroll = (props: { label: string; children: Child }) => (
  <section class="scroll" aria-label={`${props.label} (scrolls sideways)`}>
    {props.children}
  </section>
);

/** The header row of a table of `labels`. */
export const Head = (props: { labels: readonly string[] }) => (
  <thead>
    <tr>
      {props.labels.map((label) => (
        <th scope="col">{label}</th>
      ))}
    </tr>
  </thead>
);

/** A row's cells, one per column; `classFirst`: each cell writes its class before its label. */
export const cellsOf = <T,>(columns: readonly Column<T>[], row: T, classFirst?: boolean) =>
  columns.map((c) =>
    c.rowHeader ? (
      <th scope="row" class={c.class}>
        {c.cell(row)}
      </th>
    ) : (
      // A key keeps its first place when set again: classFirst puts the class before the label.
      <td
        {...(classFirst ? { class: c.class } : {})}
        data-field={c.field}
        data-label={c.label}
        class={c.class}
        {...c.attrs?.(row)}
      >
        {c.cell(row)}
      </td>
    ),
  );

/**
 * A stacked table (class `stack`) of `rows`, one cell per column. `classFirst`: the cells write
 * their class before their label (the events table's order, which its tests read).
 */
export function Table<T>(props: {
  /** What the table is (its scrolling section's label). */
  label: string;
  attrs: Attributes;
  caption?: Child;
  columns: readonly Column<T>[];
  rows: readonly T[];
  row?: (row: T) => Attributes;
  classFirst?: boolean;
}) {
  return (
    <Scroll label={props.label}>
      <table {...props.attrs} class="stack">
        {props.caption}
        <Head labels={props.columns.map((c) => c.label)} />
        <tbody>
          {props.rows.map((r) => (
            <tr {...props.row?.(r)}>{cellsOf(props.columns, r, props.classFirst)}</tr>
          ))}
        </tbody>
      </table>
    </Scroll>
  );
}
