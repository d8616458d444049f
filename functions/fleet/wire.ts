// A step's result and errors across the Durable Object boundary (JSON), and back into the types
// the HTTP app answers with (the same statuses and bodies as a step run in place).
import { ApiError, type ApiErrorKind, PermissionError } from "../../adapters/api-error.js";
import type { Status } from "../../core/kube/index.js";
import type { Decision } from "../../core/types.js";
import type { StepOutcome, StepResult } from "../step.js";

export interface WireError {
  type: "ApiError" | "PermissionError" | "Error";
  message: string;
  code?: number;
  kind?: ApiErrorKind;
  reason?: string;
  retryAfterSeconds?: number;
  request?: string;
}

export interface StepWire {
  decision: Decision;
  outcome: Record<string, unknown> & { kind: StepOutcome["kind"] };
  writer: string;
}

const apiToWire = (e: ApiError): WireError => ({
  type: "ApiError",
  message: e.message,
  code: e.code,
  kind: e.kind,
  ...(e.reason ? { reason: e.reason } : {}),
  ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
  ...(e.request ? { request: e.request } : {}),
});

const apiFromWire = (w: WireError): ApiError =>
  new ApiError(
    w.code ?? 0,
    w.kind ?? "Other",
    w.message,
    w.reason ? ({ reason: w.reason } as Status) : undefined,
    w.retryAfterSeconds,
    w.request,
  );

export function errorToWire(err: unknown): WireError {
  if (err instanceof PermissionError) return { ...apiToWire(err.cause), type: "PermissionError" };
  if (err instanceof ApiError) return apiToWire(err);
  return { type: "Error", message: (err as Error)?.message ?? String(err) };
}

export function errorFromWire(w: WireError): Error {
  if (w.type === "PermissionError") return new PermissionError(apiFromWire(w));
  if (w.type === "ApiError") return apiFromWire(w);
  return new Error(w.message);
}

export function toWire(r: StepResult): StepWire {
  const o = r.outcome;
  const outcome = (o.kind === "refused" || o.kind === "retry") && o.error ? { ...o, error: apiToWire(o.error) } : o;
  return { decision: r.decision, outcome: outcome as StepWire["outcome"], writer: r.writer };
}

export function fromWire(w: StepWire): StepResult {
  const o = w.outcome as { kind: string; error?: WireError };
  const outcome = (o.error ? { ...o, error: apiFromWire(o.error) } : o) as StepOutcome;
  return { decision: w.decision, outcome, writer: w.writer };
}
