// One simulated API server behind msw for a whole test file.
import { type SetupServer, setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createSimServer, type SimServer, type SimServerOptions } from "./sim-server.js";

/** One simulated API server behind msw for a test file; its store, log and hooks reset after each test. */
export function useSimServer(opts: SimServerOptions): { fake: SimServer; server: SetupServer } {
  const fake = createSimServer(opts);
  const server = setupServer(...fake.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => {
    fake.reset();
    server.resetHandlers();
  });
  afterAll(() => server.close());
  return { fake, server };
}
