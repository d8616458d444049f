// The set page's pictures (charts.tsx), each under its heading: the rollout's timeline while it has
// ordinals in scope, the volumes' usage for an autogrow set.
import type { SetPageView } from "../../../core/view/index.js";
import { TimelineChart, UsageChart } from "../charts.js";

export function Pictures(props: { view: SetPageView }) {
  const { timeline, usage } = props.view;
  return (
    <>
      {timeline.ordinals.length ? (
        <>
          <h2 id="timeline">Rollout timeline</h2>
          <TimelineChart timeline={timeline} />
        </>
      ) : null}
      {usage ? (
        <>
          <h2 id="usage">Volume usage (autogrow)</h2>
          <UsageChart usage={usage} />
        </>
      ) : null}
    </>
  );
}
