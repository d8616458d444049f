// Node only: `claimstep serve` over TLS from a certificate and key file (the admission webhook must
// be HTTPS), reloaded when they change, as cert-manager rotates the Secret they are mounted from.
// The files are re-read on a timer rather than watched: a Secret volume changes by swapping a
// `..data` symlink, which file watchers miss. A pair that does not load is logged and the
// previous one kept, so a half-written rotation never takes the webhook down.

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext, type Server as TlsServer } from "node:tls";
import { ConfigError } from "../config.js";

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** How often the files are compared with what is served (default 10 s). */
  reloadMs: number;
}

/** CLAIMSTEP_TLS_CERT_FILE and CLAIMSTEP_TLS_KEY_FILE (both or neither), CLAIMSTEP_TLS_RELOAD_SECONDS. */
export function tlsFilesFromEnv(env: Record<string, string | undefined>): TlsFiles | undefined {
  const certFile = env.CLAIMSTEP_TLS_CERT_FILE?.trim();
  const keyFile = env.CLAIMSTEP_TLS_KEY_FILE?.trim();
  if (!certFile && !keyFile) return undefined;
  const problems: string[] = [];
  if (!certFile)
    problems.push(
      "CLAIMSTEP_TLS_KEY_FILE is set but CLAIMSTEP_TLS_CERT_FILE is not: set both (e.g. tls.crt and tls.key of the webhook's Secret) or neither",
    );
  if (!keyFile)
    problems.push(
      "CLAIMSTEP_TLS_CERT_FILE is set but CLAIMSTEP_TLS_KEY_FILE is not: set both (e.g. tls.crt and tls.key of the webhook's Secret) or neither",
    );
  const seconds = env.CLAIMSTEP_TLS_RELOAD_SECONDS?.trim() ? Number(env.CLAIMSTEP_TLS_RELOAD_SECONDS) : 10;
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600)
    problems.push(
      `CLAIMSTEP_TLS_RELOAD_SECONDS: "${env.CLAIMSTEP_TLS_RELOAD_SECONDS}" must be a number of seconds from 1 to 3600`,
    );
  if (problems.length) throw new ConfigError(problems);
  return { certFile: certFile!, keyFile: keyFile!, reloadMs: seconds * 1000 };
}

export interface KeyPair {
  cert: Buffer;
  key: Buffer;
}

/** The pair as files hold it, checked to load (a key that does not match its certificate throws). */
export function readKeyPair(
  files: Pick<TlsFiles, "certFile" | "keyFile">,
): KeyPair & { notAfter: string; subject: string } {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(files.certFile);
  } catch (err) {
    throw new ConfigError([`CLAIMSTEP_TLS_CERT_FILE ${files.certFile}: ${(err as Error).message}`]);
  }
  try {
    key = readFileSync(files.keyFile);
  } catch (err) {
    throw new ConfigError([`CLAIMSTEP_TLS_KEY_FILE ${files.keyFile}: ${(err as Error).message}`]);
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError([
      `${files.certFile} and ${files.keyFile} are not a PEM certificate and its private key: ${(err as Error).message}`,
    ]);
  }
  return { cert, key, notAfter: new Date(x509.validTo).toISOString(), subject: x509.subject.replace(/\n/g, ", ") };
}

/** Re-read the files every `reloadMs`; a changed pair that loads replaces the served one. */
export function reloadTls(
  server: TlsServer,
  files: TlsFiles,
  served: KeyPair,
  log: (e: Record<string, unknown>) => void,
): () => void {
  let current = served;
  const timer = setInterval(() => {
    let cert: Buffer;
    let key: Buffer;
    try {
      cert = readFileSync(files.certFile);
      key = readFileSync(files.keyFile);
    } catch (err) {
      log({ msg: "tls reload failed: keeping the served certificate", error: (err as Error).message });
      return;
    }
    if (cert.equals(current.cert) && key.equals(current.key)) return;
    try {
      const next = readKeyPair(files);
      server.setSecureContext({ cert: next.cert, key: next.key });
      current = next;
      log({ msg: "tls certificate reloaded", subject: next.subject, notAfter: next.notAfter });
    } catch (err) {
      log({ msg: "tls reload failed: keeping the served certificate", error: (err as Error).message });
    }
  }, files.reloadMs);
  timer.unref();
  return () => clearInterval(timer);
}
