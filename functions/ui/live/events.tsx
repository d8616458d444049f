// The set page's recent Events of claimstep, newest first: the newest EVENTS_SHOWN unless asked for
// all of them (`?events=all`), or why they could not be read.
import type { SetPageView } from "../../../core/view/index.js";
import { type Column, Table } from "../table.js";
import { Time } from "../time.js";

/** How many of the set's Events the page shows unless asked for all of them (`?events=all`). */
export const EVENTS_SHOWN = 10;

/** Which of the set's Events the page shows: the newest EVENTS_SHOWN, or all (`?events=all`), of `total` read. */
export interface EventsMore {
  all: boolean;
  total: number;
  /** The set page's path (its base): the links add `?events=all` or drop it. */
  href: string;
}

/** Says how many of the Events are shown, with the link to the others (or back to the newest). */
function EventsShown(props: { shown: number; more?: EventsMore | undefined }) {
  const m = props.more;
  if (!m || (!m.all && m.total <= props.shown)) return null;
  if (m.all)
    return (
      <p class="muted" data-events-shown>
        All {m.total} events read (the API server keeps them for an hour).{" "}
        <a href={`${m.href}#events`}>Show the {EVENTS_SHOWN} newest only</a>
      </p>
    );
  return (
    <p class="muted" data-events-shown>
      The {props.shown} newest of {m.total} events. <a href={`${m.href}?events=all#events`}>Show all {m.total}</a>
    </p>
  );
}

/** The events table's columns, newest event first. */
const EVENT_COLUMNS: Column<SetPageView["events"][number]>[] = [
  {
    label: "Time",
    class: "num wide",
    cell: (e) => (
      <>
        {e.count > 1 ? <span class="muted">last at </span> : null}
        <Time value={e.time} />
      </>
    ),
  },
  {
    label: "Type",
    attrs: (e) => ({ class: e.type === "Warning" ? "wide s-Blocked" : "wide", "data-type": e.type }),
    cell: (e) => e.type,
  },
  {
    label: "Reason",
    class: "wide",
    cell: (e) => (
      <>
        {e.reason}
        {e.count > 1 ? (
          <>
            {" "}
            <span class="times" data-field="count" title={`recorded ${e.count} times`}>
              ×{e.count}
            </span>
          </>
        ) : null}
      </>
    ),
  },
  { label: "Note", class: "note wide", cell: (e) => e.note },
];

export function Events(props: { view: SetPageView; more?: EventsMore | undefined }) {
  const { events, eventsError } = props.view;
  return (
    <>
      <h2 id="events">Recent events</h2>
      {eventsError ? (
        <p class="error" data-events-error>
          {eventsError}
        </p>
      ) : events.length === 0 ? (
        <p class="muted">No events of claimstep on this set.</p>
      ) : (
        <>
          <EventsShown shown={events.length} more={props.more} />
          <Table
            label="Recent events"
            attrs={{ "data-events": true }}
            caption={<caption class="skip">claimstep's events on this set, newest first</caption>}
            columns={EVENT_COLUMNS}
            rows={events}
            row={(e) => ({ "data-count": String(e.count) })}
            classFirst
          />
        </>
      )}
    </>
  );
}
