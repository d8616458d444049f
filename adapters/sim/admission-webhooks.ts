// Mutating admission webhooks, as the API server calls them (k8s.io/apiserver's mutating
// dispatcher): the stored admissionregistration.k8s.io/v1 MutatingWebhookConfigurations, in name
// order, each webhook's rules, namespaceSelector, objectSelector (the new or the old object) and
// matchConditions (a small CEL subset: `object.<path>`, `oldObject.<path>`, `has(…)`, `==`, `!=`,
// `!`, `&&`, `||`), then an AdmissionReview v1 POSTed to its URL (`?timeout=<n>s` appended)
// through a fetch handler the cluster was given for that URL, its JSONPatch applied (RFC 6902), its
// warnings handed back for the client's `Warning: 299 - "…"` headers; failurePolicy decides what a
// failure means (Ignore: go on unpatched; Fail: 500 "failed calling webhook …", 403 for a
// matchCondition in error). Only StatefulSet updates reach this (statefulset-writes.ts); the
// webhooks' reinvocationPolicy is not modelled (Never).
import { type ApiError, apiErrorFrom } from "../api-error.js";
import { failure } from "./errors.js";
import type { Prng } from "./prng.js";
import type { Json, Store } from "./store.js";

/** The HTTP server behind a webhook URL: a fetch handler (claimstep's Hono app's `fetch`, a test's). */
export type WebhookHandler = (request: Request) => Response | Promise<Response>;

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

/** One request as admission sees it. */
export interface AdmissionAttributes {
  operation: "CREATE" | "UPDATE";
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespace?: string;
  name: string;
  /** The object as it would be stored (merged and defaulted), with apiVersion and kind. */
  object: Json;
  /** The stored object (UPDATE), with apiVersion and kind. */
  oldObject?: Json;
  dryRun: boolean;
  userInfo: UserInfo;
  /** What the review's `options` carries: the request's fieldManager and fieldValidation. */
  fieldManager: string;
  fieldValidation?: string;
}

export interface AdmissionResult {
  object: Json;
  warnings: string[];
  /** The webhooks called, in order (tests read it). */
  called: string[];
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `Internal error occurred: <cause>` (500), as apierrors.NewInternalError words it. */
export function webhookInternalError(cause: string): ApiError {
  return apiErrorFrom(
    500,
    failure(500, "InternalError", `Internal error occurred: ${cause}`, { causes: [{ message: cause }] }),
  );
}

/** A matchCondition that evaluated to an error under failurePolicy Fail: the real server's 403 (v1.34.2). */
function matchConditionForbidden(a: AdmissionAttributes, expression: string, err: Error): ApiError {
  return apiErrorFrom(
    403,
    failure(
      403,
      "Forbidden",
      `${a.resource}${a.group ? `.${a.group}` : ""} "${a.name}" is forbidden: expression '${expression}' resulted in error: ${err.message}`,
      { name: a.name, ...(a.group ? { group: a.group } : {}), kind: a.resource },
    ),
  );
}

/** A webhook's `allowed: false`, as webhookerrors.ToStatusErr: its code (400 when none) and reason. */
function deniedBy(webhook: string, result: Json | undefined): ApiError {
  const message = typeof result?.message === "string" && result.message ? result.message : "without explanation";
  const code = typeof result?.code === "number" && result.code >= 400 ? result.code : 400;
  const reason = typeof result?.reason === "string" && result.reason ? result.reason : "BadRequest";
  return apiErrorFrom(code, failure(code, reason, `admission webhook "${webhook}" denied the request: ${message}`));
}

// ---------------------------------------------------------------------------------------------
// Selectors

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

/** A metav1.LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); absent or {} matches everything. */
export function selectorMatches(selector: unknown, labels: Record<string, string> | undefined): boolean {
  if (!isObject(selector)) return true;
  const have = labels ?? {};
  for (const [k, v] of Object.entries(isObject(selector.matchLabels) ? selector.matchLabels : {}))
    if (have[k] !== v) return false;
  for (const e of (Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) as Requirement[]) {
    const present = Object.hasOwn(have, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case "In":
        if (!present || !values.includes(have[e.key]!)) return false;
        break;
      case "NotIn":
        if (present && values.includes(have[e.key]!)) return false;
        break;
      case "Exists":
        if (!present) return false;
        break;
      case "DoesNotExist":
        if (present) return false;
        break;
      default:
        throw new Error(`"${e.operator}" is not a valid label selector operator`);
    }
  }
  return true;
}

const labelsOf = (o: Json | undefined): Record<string, string> | undefined =>
  isObject(o?.metadata) ? ((o.metadata as Json).labels as Record<string, string> | undefined) : undefined;

/** rules[]: apiGroups, apiVersions, operations, resources (`*`, `statefulsets`; `*\/*` also subresources), scope. */
function rulesMatch(rules: unknown, a: AdmissionAttributes): boolean {
  if (!Array.isArray(rules)) return false;
  const has = (list: unknown, v: string) => Array.isArray(list) && (list.includes("*") || list.includes(v));
  return rules.some((rule: Json) => {
    if (!has(rule.apiGroups, a.group) || !has(rule.apiVersions, a.version)) return false;
    if (!has(rule.operations, a.operation)) return false;
    const resources = Array.isArray(rule.resources) ? (rule.resources as string[]) : [];
    if (!resources.some((r) => r === "*" || r === "*/*" || r === a.resource)) return false;
    const scope = (rule.scope as string | undefined) ?? "*";
    return scope === "*" || (scope === "Namespaced") === (a.namespace !== undefined);
  });
}

// ---------------------------------------------------------------------------------------------
// matchConditions: a CEL subset

/** A matchCondition that could not be evaluated (the webhook is then handled per its failurePolicy). */
export class MatchConditionError extends Error {}

const PATH = /^(object|oldObject)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/;

/** The value at `object.<path>` / `oldObject.<path>`; "no such key" (CEL's error) when a field is not there. */
function operand(text: string, vars: { object: unknown; oldObject: unknown }): unknown {
  const m = PATH.exec(text);
  if (!m)
    throw new MatchConditionError(
      `unsupported operand ${JSON.stringify(text)} (the simulated cluster evaluates object.<path> and oldObject.<path> only)`,
    );
  let v: unknown = m[1] === "object" ? vars.object : vars.oldObject;
  if (v === null || v === undefined) throw new MatchConditionError(`${m[1]} is null`);
  for (const field of m[2]!.split(".").filter(Boolean)) {
    if (!isObject(v) || !Object.hasOwn(v, field)) throw new MatchConditionError(`no such key: ${field}`);
    v = v[field];
  }
  return v;
}

/** `has(<path>.<field>)`: whether the map at <path> has the field (an error when <path> itself is not there). */
function hasField(text: string, vars: { object: unknown; oldObject: unknown }): boolean {
  const dot = text.lastIndexOf(".");
  if (dot < 0 || !PATH.test(text))
    throw new MatchConditionError(`unsupported operand ${JSON.stringify(text)} of has() (a field selection)`);
  const parent = operand(text.slice(0, dot), vars);
  if (!isObject(parent)) throw new MatchConditionError(`has(${text}): not a map`);
  return Object.hasOwn(parent, text.slice(dot + 1));
}

/** CEL equality of JSON values: maps by content (key order aside), lists element by element. */
export function celEquals(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && celEquals(a[k], b[k]));
  }
  return a === b;
}

/** A value of the CEL subset, or the error it evaluated to (CEL's `&&` and `||` absorb errors). */
type CelResult = { value: unknown } | { error: MatchConditionError };

function celTokens(expression: string): string[] | undefined {
  const tokens: string[] = [];
  const re = /\s*(&&|\|\||==|!=|!|\(|\)|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)/y;
  let at = 0;
  while (at < expression.length) {
    if (/^\s*$/.test(expression.slice(at))) break;
    re.lastIndex = at;
    const m = re.exec(expression);
    if (!m) return undefined;
    tokens.push(m[1]!);
    at = re.lastIndex;
  }
  return tokens;
}

/**
 * One matchCondition expression in the CEL subset: operands `object.<path>`, `oldObject.<path>` and
 * `has(<operand>)`, joined by `==`, `!=`, `!`, `&&`, `||` and parentheses; maps and lists compared by
 * content. As in CEL, a field that is not there is an error ("no such key") unless `&&`/`||` decide
 * without it (`false && error` is false, `true || error` true). Anything else, or an error left at the
 * end, or a result that is not a bool, throws MatchConditionError.
 */
export function evaluateMatchCondition(expression: string, vars: { object: unknown; oldObject: unknown }): boolean {
  const unsupported = () =>
    new MatchConditionError(
      `unsupported expression ${JSON.stringify(expression)} (the simulated cluster evaluates object.<path>, oldObject.<path> and has(…) joined by ==, !=, !, && and ||)`,
    );
  const tokens = celTokens(expression);
  if (!tokens || tokens.length === 0) throw unsupported();
  let i = 0;
  const attempt = (f: () => unknown): CelResult => {
    try {
      return { value: f() };
    } catch (err) {
      if (err instanceof MatchConditionError) return { error: err };
      throw err;
    }
  };
  const bool = (r: CelResult): CelResult =>
    "error" in r || typeof r.value === "boolean"
      ? r
      : { error: new MatchConditionError(`no such overload: ${JSON.stringify(r.value)} is not a bool`) };
  const logical = (op: "&&" | "||", next: () => CelResult): CelResult => {
    const parts = [bool(next())];
    while (tokens[i] === op) {
      i++;
      parts.push(bool(next()));
    }
    if (parts.length === 1) return parts[0]!;
    const decisive = op === "||";
    if (parts.some((p) => "value" in p && p.value === decisive)) return { value: decisive };
    return parts.find((p) => "error" in p) ?? { value: !decisive };
  };
  const primary = (): CelResult => {
    const t = tokens[i++];
    if (t === "(") {
      const r = or();
      if (tokens[i++] !== ")") throw unsupported();
      return r;
    }
    if (t === "has" && tokens[i] === "(") {
      const path = tokens[i + 1];
      if (tokens[i + 2] !== ")" || !path) throw unsupported();
      i += 3;
      return attempt(() => hasField(path, vars));
    }
    if (t === undefined || !PATH.test(t)) throw unsupported();
    return attempt(() => operand(t, vars));
  };
  const comparison = (): CelResult => {
    const left = primary();
    const op = tokens[i];
    if (op !== "==" && op !== "!=") return left;
    i++;
    const right = primary();
    if ("error" in left) return left;
    if ("error" in right) return right;
    const equal = celEquals(left.value, right.value);
    return { value: op === "==" ? equal : !equal };
  };
  const unary = (): CelResult => {
    if (tokens[i] !== "!") return comparison();
    i++;
    const r = bool(unary());
    return "error" in r ? r : { value: !r.value };
  };
  const and = (): CelResult => logical("&&", unary);
  const or = (): CelResult => logical("||", and);
  const result = bool(or());
  if (i !== tokens.length) throw unsupported();
  if ("error" in result) throw result.error;
  return result.value as boolean;
}

// ---------------------------------------------------------------------------------------------
// RFC 6902 JSON Patch

/** A patch that does not apply (the request fails with 500, as the API server's does). */
export class JsonPatchError extends Error {}

const unescapeToken = (token: string) => token.replace(/~1/g, "/").replace(/~0/g, "~");

function tokensOf(pointer: unknown): string[] {
  if (typeof pointer !== "string") throw new JsonPatchError(`path ${JSON.stringify(pointer)} is not a JSON pointer`);
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new JsonPatchError(`path ${JSON.stringify(pointer)} does not start with /`);
  return pointer.slice(1).split("/").map(unescapeToken);
}

function arrayIndex(token: string, length: number, forAdd: boolean, path: string): number {
  if (forAdd && token === "-") return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token))
    throw new JsonPatchError(`${path}: ${JSON.stringify(token)} is not an array index`);
  const i = Number(token);
  if (i > length || (!forAdd && i === length))
    throw new JsonPatchError(`${path}: index ${i} is out of range (length ${length})`);
  return i;
}

function parentOf(doc: unknown, tokens: string[], path: string): unknown {
  let v = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(v)) v = v[arrayIndex(t, v.length, false, path)];
    else if (isObject(v) && Object.hasOwn(v, t)) v = v[t];
    else throw new JsonPatchError(`doc is missing path: ${JSON.stringify(path)}`);
  }
  return v;
}

function getAt(doc: unknown, path: string): unknown {
  const tokens = tokensOf(path);
  if (!tokens.length) return doc;
  const parent = parentOf(doc, tokens, path);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false, path)];
  if (isObject(parent) && Object.hasOwn(parent, last)) return parent[last];
  throw new JsonPatchError(`doc is missing path: ${JSON.stringify(path)}`);
}

function addAt(doc: unknown, path: string, value: unknown, replace: boolean): unknown {
  const tokens = tokensOf(path);
  if (!tokens.length) return structuredClone(value);
  const parent = parentOf(doc, tokens, path);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) {
    const i = arrayIndex(last, parent.length, !replace, path);
    if (replace) parent[i] = structuredClone(value);
    else parent.splice(i, 0, structuredClone(value));
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, last))
      throw new JsonPatchError(`replace operation does not apply: doc is missing key: ${JSON.stringify(path)}`);
    parent[last] = structuredClone(value);
  } else throw new JsonPatchError(`doc is missing path: ${JSON.stringify(path)}`);
  return doc;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = tokensOf(path);
  if (!tokens.length) throw new JsonPatchError("remove operation cannot remove the whole document");
  const parent = parentOf(doc, tokens, path);
  const last = tokens.at(-1)!;
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false, path), 1);
  else if (isObject(parent) && Object.hasOwn(parent, last)) delete parent[last];
  else throw new JsonPatchError(`remove operation does not apply: doc is missing path: ${JSON.stringify(path)}`);
  return doc;
}

/** Apply RFC 6902 operations (add, remove, replace, move, copy, test) to a copy of `doc`; throws JsonPatchError. */
export function applyJsonPatch<T>(doc: T, ops: unknown): T {
  if (!Array.isArray(ops)) throw new JsonPatchError("the patch is not a JSON array of operations");
  let out: unknown = structuredClone(doc);
  for (const [i, op] of ops.entries()) {
    if (!isObject(op)) throw new JsonPatchError(`operation ${i} is not an object`);
    const path = op.path as string;
    switch (op.op) {
      case "add":
        if (!("value" in op)) throw new JsonPatchError(`add operation ${i} has no value`);
        out = addAt(out, path, op.value, false);
        break;
      case "replace":
        if (!("value" in op)) throw new JsonPatchError(`replace operation ${i} has no value`);
        out = addAt(out, path, op.value, true);
        break;
      case "remove":
        out = removeAt(out, path);
        break;
      case "test":
        if (!celEquals(getAt(out, path), op.value))
          throw new JsonPatchError(`testing value ${path} failed: test failed`);
        break;
      case "move":
      case "copy": {
        const value = structuredClone(getAt(out, op.from as string));
        if (op.op === "move") out = removeAt(out, op.from as string);
        out = addAt(out, path, value, false);
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${String(op.op)}`);
    }
  }
  return out as T;
}

// ---------------------------------------------------------------------------------------------
// The dispatcher

export const MUTATING_WEBHOOK_CONFIGURATIONS = "mutatingwebhookconfigurations" as const;

/** A webhook's URL as the API server calls it: clientConfig.url, or `https://<service>.<namespace>.svc:<port><path>`. */
export function webhookUrl(clientConfig: unknown): string {
  const c = isObject(clientConfig) ? clientConfig : {};
  let base: string;
  if (typeof c.url === "string") base = c.url;
  else if (isObject(c.service)) {
    const s = c.service;
    const path = typeof s.path === "string" ? s.path : "";
    base = `https://${String(s.name)}.${String(s.namespace)}.svc:${Number(s.port ?? 443)}${path}`;
  } else throw new Error("the webhook has neither clientConfig.url nor clientConfig.service");
  return base;
}

export class SimWebhooks {
  private readonly servers = new Map<string, WebhookHandler>();
  private readonly namespaceLabels = new Map<string, Record<string, string>>();

  constructor(
    private readonly store: Store,
    private readonly prng: Prng,
  ) {}

  /** Answer webhook calls to URLs under `url` (e.g. `https://claimstep-webhook.claimstep.svc:443`) with `handler`. */
  register(url: string, handler: WebhookHandler): void {
    this.servers.set(normalize(url), handler);
  }

  unregister(url: string): void {
    this.servers.delete(normalize(url));
  }

  /** Labels of a namespace, for namespaceSelector (the sim stores no Namespaces; `kubernetes.io/metadata.name` is always there). */
  labelNamespace(namespace: string, labels: Record<string, string>): void {
    this.namespaceLabels.set(namespace, { ...labels });
  }

  private labelsOfNamespace(namespace: string): Record<string, string> {
    return { ...this.namespaceLabels.get(namespace), "kubernetes.io/metadata.name": namespace };
  }

  /** Whether any MutatingWebhookConfiguration is stored at all (none: nothing to do). */
  any(): boolean {
    return this.store.all(MUTATING_WEBHOOK_CONFIGURATIONS).length > 0;
  }

  private handlerFor(url: string): WebhookHandler | undefined {
    const target = normalize(url);
    let best: { key: string; handler: WebhookHandler } | undefined;
    for (const [key, handler] of this.servers) {
      if (
        (target === key || target.startsWith(key.endsWith("/") ? key : `${key}/`) || target.startsWith(`${key}?`)) &&
        (!best || key.length > best.key.length)
      )
        best = { key, handler };
    }
    return best?.handler;
  }

  /** Run every matching mutating webhook on the request, in the API server's order; throws the refusal. */
  async admit(a: AdmissionAttributes): Promise<AdmissionResult> {
    let object = structuredClone(a.object);
    const warnings: string[] = [];
    const called: string[] = [];
    for (const webhook of this.webhooksInOrder()) {
      const hook = hookOf(webhook);
      if (!this.applies(hook, a, object)) continue;
      refuseDryRunWithSideEffects(hook, a);
      called.push(hook.name);
      const outcome = await this.call(webhook, a, object);
      if ("error" in outcome) {
        hook.failed(outcome.error);
        continue;
      }
      const response = outcome.response;
      if (response.allowed !== true) throw deniedBy(hook.name, isObject(response.status) ? response.status : undefined);
      for (const w of Array.isArray(response.warnings) ? response.warnings : [])
        if (typeof w === "string" && w) warnings.push(w);
      object = patched(hook, response, object);
    }
    return { object, warnings, called };
  }

  /** The webhooks of every MutatingWebhookConfiguration, the configurations in name order. */
  private *webhooksInOrder(): Generator<Json> {
    const configs = this.store
      .all(MUTATING_WEBHOOK_CONFIGURATIONS)
      .sort((x, y) => (String((x.metadata as Json).name) < String((y.metadata as Json).name) ? -1 : 1));
    for (const config of configs) yield* (Array.isArray(config.webhooks) ? config.webhooks : []) as Json[];
  }

  /** Whether the request is the webhook's: its rules, then its selectors, then its matchConditions. */
  private applies(hook: Hook, a: AdmissionAttributes, object: Json): boolean {
    return (
      rulesMatch(hook.webhook.rules, a) && this.selectorsMatch(hook, a, object) && conditionsMatch(hook, a, object)
    );
  }

  /** namespaceSelector on the namespace's labels, objectSelector on the new or the old object's; a bad selector is a failure. */
  private selectorsMatch({ webhook, failed }: Hook, a: AdmissionAttributes, object: Json): boolean {
    try {
      if (a.namespace !== undefined && !selectorMatches(webhook.namespaceSelector, this.labelsOfNamespace(a.namespace)))
        return false;
      return (
        selectorMatches(webhook.objectSelector, labelsOf(object)) ||
        !!(a.oldObject && selectorMatches(webhook.objectSelector, labelsOf(a.oldObject)))
      );
    } catch (err) {
      failed(`failed to match the selectors: ${(err as Error).message}`);
      return false;
    }
  }

  /** POST one AdmissionReview; the webhook's `response`, or why the call failed. */
  private async call(webhook: Json, a: AdmissionAttributes, object: Json): Promise<CallOutcome> {
    const timeoutSeconds = typeof webhook.timeoutSeconds === "number" ? webhook.timeoutSeconds : 10;
    const target = this.target(webhook, timeoutSeconds);
    if ("error" in target) return target;
    const post = `failed to call webhook: Post ${JSON.stringify(target.url)}`;
    const uid = this.prng.uuid();
    const res = await sendReview(target, admissionReview(a, object, uid), timeoutSeconds, post);
    if ("error" in res) return res;
    return reviewResponse(res, uid, post);
  }

  /** The URL called (with `?timeout=<n>s`) and the handler behind it, or why there is none. */
  private target(webhook: Json, timeoutSeconds: number): { url: string; handler: WebhookHandler } | { error: string } {
    let base: string;
    try {
      base = webhookUrl(webhook.clientConfig);
    } catch (err) {
      return { error: (err as Error).message };
    }
    const url = `${base}${base.includes("?") ? "&" : "?"}timeout=${timeoutSeconds}s`;
    const handler = this.handlerFor(url);
    if (!handler) {
      const u = new URL(url);
      return {
        error: `failed to call webhook: Post ${JSON.stringify(url)}: dial tcp ${u.hostname}:${u.port || 443}: connect: connection refused`,
      };
    }
    return { url, handler };
  }
}

/** One webhook as the dispatcher runs it: its name, and what a failure means under its failurePolicy. */
interface Hook {
  webhook: Json;
  name: string;
  ignore: boolean;
  /** A failure: refused as 500 "failed calling webhook …" under Fail, passed over under Ignore. */
  failed: (cause: string) => void;
}

function hookOf(webhook: Json): Hook {
  const name = String(webhook.name);
  const ignore = webhook.failurePolicy === "Ignore";
  const failed = (cause: string): void => {
    if (!ignore) throw webhookInternalError(`failed calling webhook "${name}": ${cause}`);
  };
  return { webhook, name, ignore, failed };
}

/** Every matchCondition true; one in error refuses the request under Fail (403, as the real v1.34.2 server: test/e2e/admission-fail-closed.test.ts). */
function conditionsMatch({ webhook, ignore }: Hook, a: AdmissionAttributes, object: Json): boolean {
  let condition = "";
  try {
    for (const c of (Array.isArray(webhook.matchConditions) ? webhook.matchConditions : []) as Json[]) {
      condition = String(c.expression);
      if (!evaluateMatchCondition(condition, { object, oldObject: a.oldObject ?? null })) return false;
    }
    return true;
  } catch (err) {
    if (!(err instanceof MatchConditionError)) throw err;
    if (!ignore) throw matchConditionForbidden(a, condition, err);
    return false;
  }
}

/** A dry run may reach only a webhook without side effects (None or NoneOnDryRun); else 400. */
function refuseDryRunWithSideEffects({ webhook, name }: Hook, a: AdmissionAttributes): void {
  if (a.dryRun && webhook.sideEffects !== "None" && webhook.sideEffects !== "NoneOnDryRun") {
    throw apiErrorFrom(
      400,
      failure(400, "BadRequest", `admission webhook "${name}" has side effects and does not support dry run`),
    );
  }
}

/** The object with the response's JSONPatch applied (unchanged when there is none, or when a bad patchType is ignored). */
function patched({ name, failed }: Hook, response: Json, object: Json): Json {
  if (response.patch === undefined) return object;
  if (response.patchType !== "JSONPatch") {
    failed(`received invalid webhook response: patchType ${JSON.stringify(response.patchType)} is not JSONPatch`);
    return object;
  }
  let ops: unknown;
  try {
    ops = JSON.parse(atobUtf8(String(response.patch)));
  } catch (err) {
    throw webhookInternalError(
      `admission webhook "${name}" returned a patch that is not base64-encoded JSON: ${(err as Error).message}`,
    );
  }
  let next: Json;
  try {
    next = applyJsonPatch(object, ops);
  } catch (err) {
    if (!(err instanceof JsonPatchError)) throw err;
    throw webhookInternalError(err.message);
  }
  if (!isObject(next) || !isObject(next.metadata))
    throw webhookInternalError(
      `admission webhook "${name}" patched the object into something that is not an object with metadata`,
    );
  return next;
}

/** What one call of a webhook gives: its AdmissionReview's `response`, or why the call failed. */
type CallOutcome = { response: Json } | { error: string };

/** The AdmissionReview v1 request the API server sends about `a`. */
function admissionReview(a: AdmissionAttributes, object: Json, uid: string): Json {
  return {
    kind: "AdmissionReview",
    apiVersion: "admission.k8s.io/v1",
    request: {
      uid,
      kind: { group: a.group, version: a.version, kind: a.kind },
      resource: { group: a.group, version: a.version, resource: a.resource },
      requestKind: { group: a.group, version: a.version, kind: a.kind },
      requestResource: { group: a.group, version: a.version, resource: a.resource },
      name: a.name,
      ...(a.namespace !== undefined ? { namespace: a.namespace } : {}),
      operation: a.operation,
      userInfo: a.userInfo,
      object,
      oldObject: a.oldObject ?? null,
      dryRun: a.dryRun,
      options: {
        kind: a.operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
        apiVersion: "meta.k8s.io/v1",
        ...(a.dryRun ? { dryRun: ["All"] } : {}),
        fieldManager: a.fieldManager,
        ...(a.fieldValidation ? { fieldValidation: a.fieldValidation } : {}),
      },
    },
  };
}

/** POSTs the review to the handler, aborted after `timeoutSeconds`; the answer, or why there is none (`post` its prefix). */
async function sendReview(
  target: { url: string; handler: WebhookHandler },
  review: Json,
  timeoutSeconds: number,
  post: string,
): Promise<Response | { error: string }> {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve("timeout");
    }, timeoutSeconds * 1000);
  });
  try {
    const request = new Request(target.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(review),
      signal: abort.signal,
    });
    const res = await Promise.race([Promise.resolve(target.handler(request)), timedOut]);
    return res === "timeout" ? { error: `${post}: context deadline exceeded` } : res;
  } catch (err) {
    return { error: `${post}: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

/** The webhook's answer as the dispatcher reads it: a 200 with an AdmissionReview v1 whose response is for `uid`. */
async function reviewResponse(res: Response, uid: string, post: string): Promise<CallOutcome> {
  if (res.status !== 200)
    return {
      error: `${post}: the server responded with the status code ${res.status} but did not return more information`,
    };
  let body: unknown;
  try {
    body = await res.json();
  } catch (err) {
    return { error: `received invalid webhook response: ${(err as Error).message}` };
  }
  if (
    !isObject(body) ||
    body.kind !== "AdmissionReview" ||
    body.apiVersion !== "admission.k8s.io/v1" ||
    !isObject(body.response)
  ) {
    return {
      error: "received invalid webhook response: expected an admission.k8s.io/v1 AdmissionReview with a response",
    };
  }
  if (body.response.uid !== uid)
    return {
      error: `received invalid webhook response: expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(body.response.uid)}`,
    };
  return { response: body.response };
}

const normalize = (url: string): string => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, "") + u.search;
};

/** base64 → UTF-8 text (atob gives bytes as Latin-1 characters). */
function atobUtf8(b64: string): string {
  const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

/** A warning as the `Warning` header carries it (RFC 7234 299, as k8s.io/apiserver's warning recorder writes it). */
export const warningHeader = (text: string): string => `299 - ${JSON.stringify(text.replace(/[\r\n]+/g, " "))}`;
