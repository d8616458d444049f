// The msw fake API server (test/fake-apiserver) served over a real socket on 127.0.0.1, for
// processes msw cannot reach: the Worker inside workerd, a spawned CLI.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from "../fake-apiserver/index.js";

export interface SocketFake {
  fake: FakeApiServer;
  url: string;
  close(): Promise<void>;
}

const bodyOf = async (req: IncomingMessage): Promise<Buffer | undefined> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? Buffer.concat(chunks) : undefined;
};

export async function serveFake(opts: Omit<FakeApiServerOptions, "baseUrl">): Promise<SocketFake> {
  let fake: FakeApiServer | undefined;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const answer = await fake!.handle(
        new Request(`${url}${req.url}`, { method: req.method!, headers, ...(body && req.method !== "GET" ? { body: new Uint8Array(body) } : {}) }),
      );
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake = createFakeApiServer({ ...opts, baseUrl: url });
  return {
    fake,
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
