// The status page over a real socket on 127.0.0.1, in front of a simulated cluster, for the HTTP
// and browser tests: the production app (functions/app.ts) with the page's routes, the sim's
// production reader and writers, and a `step()` that runs one step and lets cluster time pass.

import type { SimCluster } from "../../../adapters/sim/cluster.js";
import type { ScenarioName } from "../../../adapters/sim/scenario-names.js";
import { createApp } from "../../../functions/app.js";
import { RecentIds } from "../../../functions/auth.js";
import type { Viewer } from "../../../functions/config.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { startServer } from "../../../functions/server.js";
import { runStep, type StepResult } from "../../../functions/step.js";
import { uiSource } from "../../../functions/ui/source.js";

export const API_TOKEN = "step-token-0123456789abcdef";
export const VIEWER_TOKEN = "viewer-token-0123456789abcdef";
export const REF = { namespace: "default", name: "web" };

/** Markup an attacker could put in the cluster: it must show as text, and never run. */
export const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;

export interface UiServer {
  url: string;
  sim: SimCluster;
  app: ReturnType<typeof createApp>;
  /** One step of default/web, then `ms` of cluster time. */
  step(ms?: number): Promise<StepResult>;
  close(): Promise<void>;
}

export interface UiServerOptions {
  scenario?: ScenarioName;
  viewers?: Viewer[];
  namespaces?: string[];
  everySeconds?: number;
  streamRenders?: number;
  stream?: boolean;
  /** Whose clock the page's times are on (serve --cluster sim: the simulated cluster's). */
  clock?: "simulated";
}

export async function startUi(opts: UiServerOptions = {}): Promise<UiServer> {
  const sim = await SCENARIOS[opts.scenario ?? "grow"]!.build(1);
  const app = createApp({
    reader: sim.reader,
    writers: sim.writers,
    auth: { bearerTokens: [API_TOKEN], webhookSecrets: [], replay: new RecentIds() },
    now: () => sim.now(),
    // Autogrow's reader (the simulated Prometheus): the set page's usage bars read through it.
    metrics: sim.metrics,
    namespaces: opts.namespaces ?? [],
    ui: {
      viewers: opts.viewers ?? [
        { token: VIEWER_TOKEN },
        { token: "prod-viewer-0123456789abcdef", namespaces: ["prod"] },
      ],
      source: uiSource(sim.client),
      everySeconds: opts.everySeconds ?? 0.2,
      ...(opts.streamRenders !== undefined ? { streamRenders: opts.streamRenders } : {}),
      ...(opts.stream !== undefined ? { stream: opts.stream } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
    },
  });
  const server = await startServer({ app, port: 0, log: () => {}, drainMs: 500 });
  return {
    url: `http://127.0.0.1:${server.port}`,
    sim,
    app,
    async step(ms = 10_000) {
      const r = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        metrics: sim.metrics,
        ref: REF,
        now: sim.now(),
      });
      sim.advance(ms);
      return r;
    },
    close: () => server.close(),
  };
}

/** Put hostile markup where the cluster lets anyone write free text: templates, a StorageClass name, an Event's note. */
export async function makeHostile(sim: SimCluster): Promise<void> {
  sim.update("statefulsets", "default", "web", (s: any) => {
    s.metadata.annotations["claimstep.io/volume-claim-templates"] = JSON.stringify([
      {
        metadata: { name: "data", annotations: { note: HOSTILE } },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: HOSTILE,
          resources: { requests: { storage: "2Gi" } },
        },
      },
    ]);
  });
  await sim.admin.createEvent(
    {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "web-hostile", namespace: "default" },
      eventTime: "2026-11-30T10:00:00.000000Z",
      reportingController: "claimstep.io/stepper",
      reportingInstance: "test",
      action: "Block",
      reason: "ApplyRejected",
      type: "Warning",
      note: `the API server said: ${HOSTILE}`,
      regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: "default", name: "web" },
    },
    { fieldManager: "test" },
  );
}

/** A signed-in request's headers. */
export const viewer = (token = VIEWER_TOKEN) => ({ cookie: `claimstep_viewer=${token}` });
