// A time as the status page shows it (pages.tsx, charts.tsx): `2026-11-30 10:11:45 UTC` in a
// <time> element carrying the value as read, or the value itself when it is not a time.
import { timeText } from "../../core/view/index.js";

/** A timestamp in the one format of every page (`2026-11-30 10:11:45 UTC`), machine-readable in `datetime`. */
export function Time(props: { value: string }) {
  const text = timeText(props.value);
  return text === props.value ? <span>{props.value}</span> : <time datetime={props.value}>{text}</time>;
}
