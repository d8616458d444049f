// The sweeper's Lease (coordination.k8s.io/v1) through the direct adapter: get, create, and a merge
// patch under a resourceVersion precondition (client-go's Update). What the election reads and
// writes are the ports of core/ports.ts (LeaseApi, LeaseSpec); what a refusal means is decided here.

import type { LeaseApi, LeaseSpec, LeaseWriteOutcome, ObservedLease } from "../../core/ports.js";
import * as z from "../../core/zod.js";
import { ApiError } from "../api-error.js";
import type { KubeClient } from "./client.js";
import { LeaseRoutes } from "./routes.js";

/** The Lease as claimstep reads it (other fields are kept by the server, never sent back). */
const Lease = z.looseObject({
  metadata: z.looseObject({ name: z.string(), resourceVersion: z.string() }),
  spec: z.optional(
    z.looseObject({
      holderIdentity: z.optional(z.nullable(z.string())),
      leaseDurationSeconds: z.optional(z.nullable(z.int())),
      acquireTime: z.optional(z.nullable(z.string())),
      renewTime: z.optional(z.nullable(z.string())),
      leaseTransitions: z.optional(z.nullable(z.int())),
    }),
  ),
});

const MERGE_PATCH = "application/merge-patch+json";

const observed = (body: unknown): ObservedLease => {
  const parsed = Lease.safeParse(body);
  if (!parsed.success)
    throw new Error(`unexpected Lease from the API server: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const s = parsed.data.spec ?? {};
  const spec: LeaseSpec = {};
  if (typeof s.holderIdentity === "string") spec.holderIdentity = s.holderIdentity;
  if (typeof s.leaseDurationSeconds === "number") spec.leaseDurationSeconds = s.leaseDurationSeconds;
  if (typeof s.acquireTime === "string") spec.acquireTime = s.acquireTime;
  if (typeof s.renewTime === "string") spec.renewTime = s.renewTime;
  if (typeof s.leaseTransitions === "number") spec.leaseTransitions = s.leaseTransitions;
  return { spec, resourceVersion: parsed.data.metadata.resourceVersion };
};

export interface KubeLeaseOptions {
  namespace: string;
  name: string;
  /** Each request gives up after this long (the election's next pass tries again). */
  timeoutMs: number;
}

/** One Lease, by the routes of LeaseRoutes. */
export class KubeLease implements LeaseApi {
  readonly describe: string;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: KubeLeaseOptions,
  ) {
    this.describe = `leases.coordination.k8s.io ${opts.namespace}/${opts.name}`;
  }

  private get target() {
    return { namespace: this.opts.namespace, name: this.opts.name };
  }

  async get(): Promise<ObservedLease | undefined> {
    try {
      return observed(
        await this.client.send(LeaseRoutes.getLease, this.target, { signal: AbortSignal.timeout(this.opts.timeoutMs) }),
      );
    } catch (err) {
      if (err instanceof ApiError && err.kind === "NotFound") return undefined;
      throw err;
    }
  }

  async create(spec: LeaseSpec): Promise<LeaseWriteOutcome> {
    const body = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.opts.name, namespace: this.opts.namespace },
      spec,
    };
    return this.write(() =>
      this.client.create(
        LeaseRoutes.createLease,
        { namespace: this.opts.namespace },
        body,
        AbortSignal.timeout(this.opts.timeoutMs),
      ),
    );
  }

  async update(spec: LeaseSpec, resourceVersion: string): Promise<LeaseWriteOutcome> {
    const body = { metadata: { resourceVersion }, spec };
    return this.write(() =>
      this.client.patch(
        LeaseRoutes.patchLease,
        this.target,
        body,
        MERGE_PATCH,
        {},
        AbortSignal.timeout(this.opts.timeoutMs),
      ),
    );
  }

  private async write(send: () => Promise<unknown>): Promise<LeaseWriteOutcome> {
    try {
      return { kind: "written", lease: observed(await send()) };
    } catch (err) {
      // AlreadyExists (lease-create-2.txt) or a stale resourceVersion: another replica wrote first.
      if (err instanceof ApiError && err.code === 409) return { kind: "lost" };
      return { kind: "failed", error: (err as Error).message };
    }
  }
}
