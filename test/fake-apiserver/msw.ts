// One fake API server behind msw for a test file: listening for the whole file, its store and any
// per-test handlers reset after each test, so no test sees another's objects.
import { setupServer, type SetupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createFakeApiServer } from "./server.js";

export function useFakeApiServer(options: Parameters<typeof createFakeApiServer>[0]): {
  fake: ReturnType<typeof createFakeApiServer>;
  server: SetupServer;
} {
  const fake = createFakeApiServer(options);
  const server = setupServer(...fake.handlers);
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => {
    fake.reset();
    server.resetHandlers();
  });
  afterAll(() => server.close());
  return { fake, server };
}
