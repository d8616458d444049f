// `claimstep apply -f sts.yaml [--dry-run]`: the gesture people know, for a StatefulSet whose claim
// templates changed. The manifest (YAML or JSON, one document; `-f -`: stdin) is sent as
// `kubectl apply --server-side --force-conflicts` sends it — PATCH application/apply-patch+yaml,
// fieldManager claimstep-apply, force — as Argo CD and Flux apply server-side: only the fields the
// manifest states are changed (claimstep's annotations, a partition it holds stay), and the live
// set is made to match the manifest whoever wrote a field last. The API server's mutating
// webhooks run on it: claimstep's (deploy/kubernetes/admission.yaml; registered in the simulated
// cluster) keeps spec.volumeClaimTemplates and moves the new templates into claimstep's
// annotation, and says so in a warning, printed as kubectl prints them. `--dry-run`: ?dryRun=All.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { recreateOutlook } from "../../core/change/index.js";
import { StatefulSet } from "../../core/kube/index.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { emit, print } from "./io.js";
import type { Target } from "./target.js";

export const APPLY_FIELD_MANAGER = "claimstep-apply";

/** Where a set whose template change was refused learns what to do. */
export const APPLY_FIX = "label the set claimstep.io/admission=enabled or install the webhook: docs/admission.md";

/** On the simulated cluster, where neither fix can be made: its one scenario with the webhook installed. */
const SIM_APPLY_FIX =
  "the simulated cluster has claimstep's webhook installed only in its apply scenario: run the same command with --cluster sim:apply";
const simulated = (cluster: unknown): boolean => typeof cluster === "string" && /^sim(:|$)/.test(cluster);

/** claimstep's webhook did not answer: it fails closed (docs/admission.md, "When claimstep is down"). */
export const WEBHOOK_DOWN =
  "claimstep's admission webhook did not answer, and it fails closed (failurePolicy: Fail): a change of the claim templates waits for it rather than becoming the API server's 422 Invalid, which Flux's force answers by deleting the set. Nothing was written: get the webhook running (kubectl -n claimstep get pods -l app.kubernetes.io/component=webhook) and apply again (docs/admission.md).";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function readManifest(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT") throw new UsageError(`apply: ${file}: no such file`);
    if (e.code === "EISDIR") throw new UsageError(`apply: ${file} is a directory: name one manifest file`);
    throw new UsageError(`apply: cannot read ${file === "-" ? "stdin" : file}: ${e.message}`);
  }
}

/** The one StatefulSet of a manifest file, or why not. */
export function parseManifest(text: string, file: string): Json {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new UsageError(`apply: ${file}: not YAML or JSON`);
  const bad = docs.find((d) => d.errors.length);
  if (bad) throw new UsageError(`apply: ${file} is not valid YAML or JSON: ${bad.errors[0]!.message.split("\n")[0]}`);
  const objects = docs.map((d) => d.toJS() as unknown).filter((o) => o !== null && o !== undefined);
  if (objects.length === 0) throw new UsageError(`apply: ${file} holds no document`);
  if (objects.length > 1)
    throw new UsageError(
      `apply: ${file} holds ${objects.length} documents: claimstep apply takes one StatefulSet; split the file (or kubectl apply the others)`,
    );
  const o = objects[0];
  if (!isObject(o)) throw new UsageError(`apply: ${file}: the document is not an object`);
  if (o.kind !== "StatefulSet" || o.apiVersion !== "apps/v1") {
    const what = o.kind === undefined ? "a document without kind" : `${String(o.apiVersion ?? "?")} ${String(o.kind)}`;
    throw new UsageError(
      `apply: ${file} holds ${what}, not an apps/v1 StatefulSet: claimstep apply applies StatefulSets only`,
    );
  }
  if (!isObject(o.metadata) || typeof o.metadata.name !== "string" || !o.metadata.name)
    throw new UsageError(`apply: ${file}: the StatefulSet has no metadata.name`);
  return o;
}

/** The texts of `Warning: 299 - "…"` headers (several in one, comma-separated, as fetch joins them). */
export function warningTexts(header: string | null): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const m of header.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) {
    try {
      out.push(JSON.parse(`"${m[1]}"`) as string);
    } catch {
      out.push(m[1]!);
    }
  }
  return out;
}

/** Read the manifest, send it as server-side apply to where it names (or -n, or the context's namespace), say the answer. */
export async function apply(ctx: Context): Promise<number> {
  const manifest = givenManifest(ctx);
  const metadata = manifest.metadata as Json;
  const name = metadata.name as string;
  const given = givenNamespace(ctx, metadata);
  const target = await ctx.target();
  const namespace = given ?? ctx.flags.namespace ?? target.namespace;
  const { server, request } = await apiRequests(ctx, target);
  const path = `${server.replace(/\/+$/, "")}/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/statefulsets/${encodeURIComponent(name)}`;
  // What is there now: to say created, configured or unchanged as kubectl does.
  const beforeVersion = resourceVersionOf(await request("GET", path));
  const body = JSON.stringify({ ...manifest, metadata: { ...metadata, namespace } });
  const answer = await request("PATCH", `${path}?${applyQuery(ctx)}`, body);
  const warnings = warningTexts(answer.res.headers.get("warning"));
  for (const w of warnings) ctx.io.stderr.write(`Warning: ${w}\n`);
  const kindName = `statefulset.apps/${name}`;
  if (!answer.res.ok) return sayRefused(ctx, `${kindName} in ${namespace}`, answer);
  sayApplied(ctx, kindName, answer, beforeVersion, warnings);
  return EXIT.ok;
}

/** The manifest of -f (required): its one StatefulSet. */
function givenManifest(ctx: Context): Json {
  const file = ctx.flags.filename;
  if (!file) throw new UsageError("apply: name the manifest: claimstep apply -f sts.yaml (-f - reads stdin)");
  return parseManifest(readManifest(file), file === "-" ? "stdin" : file);
}

/** The manifest's metadata.namespace, if it names one; refused when -n names another, as kubectl refuses it. */
function givenNamespace(ctx: Context, metadata: Json): string | undefined {
  const given = typeof metadata.namespace === "string" && metadata.namespace ? metadata.namespace : undefined;
  if (given && ctx.flags.namespace && given !== ctx.flags.namespace) {
    throw new UsageError(
      `apply: the namespace from the provided object "${given}" does not match the namespace "${ctx.flags.namespace}": pass --namespace ${given}, or drop metadata.namespace`,
    );
  }
  return given;
}

/** An answer of the API server: the response, its body as JSON (the text when it is not JSON; undefined when empty). */
interface Answer {
  res: Response;
  json: unknown;
}
type Request = (method: string, url: string, body?: string) => Promise<Answer>;

/** Plain requests to the target's API server, with its credentials; one that gets no answer says which server. */
async function apiRequests(ctx: Context, target: Target): Promise<{ server: string; request: Request }> {
  if (!target.api) throw new Error(`apply: ${target.label} takes no plain requests`);
  const api = target.api();
  const headers = typeof api.headers === "function" ? await api.headers() : (api.headers ?? {});
  const doFetch = api.fetch ?? ((u: string, init: RequestInit) => fetch(u, init));
  const request: Request = async (method, url, body) => {
    try {
      const res = await doFetch(url, {
        method,
        headers: {
          ...headers,
          Accept: "application/json",
          "User-Agent": "claimstep",
          ...(body !== undefined ? { "Content-Type": "application/apply-patch+yaml" } : {}),
        },
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.any([AbortSignal.timeout(30_000), ctx.signal]),
      });
      return { res, json: jsonOf(await res.text()) };
    } catch (err) {
      throw new Error(`apply: cannot reach the API server at ${api.server}: ${(err as Error).message}`);
    }
  };
  return { server: api.server, request };
}

function jsonOf(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** The live set's resourceVersion; undefined when there is none. */
const resourceVersionOf = ({ res, json }: Answer): unknown =>
  res.ok && isObject(json) && isObject(json.metadata) ? json.metadata.resourceVersion : undefined;

/** As kubectl apply --server-side --force-conflicts sends it; --dry-run: the server's dry run. */
const applyQuery = (ctx: Context): URLSearchParams =>
  new URLSearchParams({
    fieldManager: APPLY_FIELD_MANAGER,
    force: "true",
    ...(ctx.flags["dry-run"] === true ? { dryRun: "All" } : {}),
  });

/** The server refused `what` (e.g. statefulset.apps/web in default): its message, and the fix of the refusals claimstep knows. */
function sayRefused(ctx: Context, what: string, { res, json }: Answer): number {
  const message =
    isObject(json) && typeof json.message === "string"
      ? json.message
      : `HTTP ${res.status}${typeof json === "string" && json ? `: ${json.slice(0, 200)}` : ""}`;
  const refusedTemplates = res.status === 422 && /updates to statefulset spec for fields other than/.test(message);
  const webhookDown = res.status === 500 && /failed calling webhook "[^"]*admission\.claimstep\.io"/.test(message);
  ctx.io.stderr.write(`claimstep apply: ${what}: ${message}\n`);
  if (refusedTemplates) {
    ctx.io.stderr.write(
      `The API server refuses a change of spec.volumeClaimTemplates; claimstep's admission webhook turns it into a rollout: ${simulated(ctx.flags.cluster) ? SIM_APPLY_FIX : APPLY_FIX}. Nothing was written.\n`,
    );
  }
  if (webhookDown) ctx.io.stderr.write(`${WEBHOOK_DOWN}\n`);
  return EXIT.error;
}

/** Applied: created, configured or unchanged (as kubectl says it), or the set as stored (-o); then whether it ends in a re-create. */
function sayApplied(ctx: Context, kindName: string, { res, json }: Answer, beforeVersion: unknown, warnings: string[]) {
  const dryRun = ctx.flags["dry-run"] === true;
  const answered = isObject(json) ? json : {};
  const version = isObject(answered.metadata) ? answered.metadata.resourceVersion : undefined;
  const outcome =
    res.status === 201 || beforeVersion === undefined
      ? "created"
      : !dryRun && version === beforeVersion
        ? "unchanged"
        : "configured";
  // Said before it happens: whether the set as stored (the webhook's annotations) ends in a re-create, and why.
  const stored = StatefulSet.safeParse(answered);
  const outlook = stored.success ? recreateOutlook(stored.data) : undefined;
  const said = outlook !== undefined && warnings.some((w) => w.includes(outlook.text));
  if (ctx.json) emit(ctx, answered);
  else print(ctx.io, `${kindName} ${outcome}${dryRun ? " (server dry run)" : ""}`);
  // Unless claimstep's webhook said it already, in its warning.
  if (outlook && !said) (ctx.json ? ctx.io.stderr : ctx.io.stdout).write(`${outlook.text}\n`);
}
