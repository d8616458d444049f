// A certificate authority of a test's own, made with openssl for this run (EC P-256, one day), and
// the certificates it signs: a serving one for IP:127.0.0.1 and client ones. The TLS tests (the
// server's HTTPS, kubeconfig loading, the agent's fetch, the e2e admission webhook) made these four
// times over with the same openssl lines.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export interface TestCa {
  /** The folder holding `ca.crt`/`ca.key` and every `<name>.crt`/`<name>.key` issued. */
  dir: string;
  /** A path in that folder. */
  file(name: string): string;
  /**
   * A serving certificate for IP:127.0.0.1 (`<name>.crt`, `<name>.key`) with this subject;
   * `extensions` are further lines of its extension file (e.g. `extendedKeyUsage=serverAuth`).
   */
  serving(name: string, subject: string, extensions?: string[]): void;
  /** A client certificate (`<name>.crt`, `<name>.key`): the subject is who the server sees. */
  client(name: string, subject: string): void;
}

/** A new CA (`ca.crt`, `ca.key`, subject `/CN=<commonName>`) in `dir`, an existing folder. */
export function makeTestCa(dir: string, commonName: string): TestCa {
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const sign = (name: string, subject: string, extfile?: string) => {
    openssl("req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject);
    const x509 = ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"];
    openssl(...x509, "-out", `${name}.crt`, "-days", "1", ...(extfile ? ["-extfile", extfile] : []));
  };
  openssl("req", "-x509", ...EC_KEY, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", `/CN=${commonName}`);
  return {
    dir,
    file,
    serving(name, subject, extensions = []) {
      const extfile = `${name}.ext`;
      writeFileSync(file(extfile), ["subjectAltName=IP:127.0.0.1", ...extensions].map((l) => `${l}\n`).join(""));
      sign(name, subject, extfile);
    },
    client: (name, subject) => sign(name, subject),
  };
}
