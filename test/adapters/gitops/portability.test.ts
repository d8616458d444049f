// The GitOps adapter and its webhook routes run on Workers too: no Node built-ins, no Buffer,
// no process, no client-node — only fetch, Web Crypto, TextEncoder/Decoder, atob/btoa.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const files = [
  ...readdirSync(`${root}adapters/gitops`)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `adapters/gitops/${f}`),
  "functions/routes/gitops-webhooks.ts",
  ...readdirSync(`${root}functions/routes/gitops-webhooks`)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `functions/routes/gitops-webhooks/${f}`),
];

describe("GitOps code is portable to Workers", () => {
  it.each(files)("%s uses no Node-only API", (file) => {
    const code = readFileSync(root + file, "utf8").replace(/^\s*(\/\/|\*|\/\*).*$/gm, "");
    expect(code).not.toMatch(
      /from\s+["']node:|require\(|\bBuffer\b|\bprocess\.|@kubernetes\/client-node|@hono\/node-server/,
    );
  });

  it("covers the adapter's files", () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });
});
