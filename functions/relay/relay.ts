// The relay proper: watches opted-in StatefulSets and their PVCs and pods, maps each event onto
// the set it concerns, debounces per set, and sends one event per burst — at most one delivery
// in flight per set: the bursts of a set whose delivery is running are merged into one follow-up,
// sent when it finishes (a hung or slow app sees one request per set, never a pile of them).

import { claimOrdinal } from "../../core/kube/index.js";
import { isOptedIn } from "../../core/policy/index.js";
import type { SetRef } from "../../core/types.js";
import type { RelayClock } from "./clock.js";
import { DEFAULT_DEBOUNCE, type DebounceOptions, Debouncer } from "./debounce.js";
import type { RelayEvent } from "./event.js";
import { ResilientWatch, type ResilientWatchOptions, type WatchEvent, type WatchSource } from "./watch.js";

/** What the relay knows of an opted-in set, to map PVC and pod events onto it. */
interface TrackedSet {
  ref: SetRef;
  matchLabels: Record<string, string>;
  templates: string[];
}

const keyOf = (ref: SetRef) => `${ref.namespace}/${ref.name}`;

/** An event carries at most this many causes (RelayEvent's schema). */
const MAX_CAUSES = 50;

const optedIn = (sts: any): boolean => isOptedIn(sts);

const labelsMatch = (labels: Record<string, string> | undefined, selector: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const ordinalSuffix = /^(.*)-(\d+)$/;

export interface RelayOptions {
  source: WatchSource;
  clock: RelayClock;
  /** Namespaces to watch; empty = all. */
  namespaces: readonly string[];
  debounce?: DebounceOptions;
  /** Sends one event (usually `deliver` bound to the URL and secret). */
  send(event: RelayEvent): Promise<unknown>;
  log?: (entry: Record<string, unknown>) => void;
  backoff?: { baseMs: number; maxMs: number };
}

const paths = (ns: string | undefined) => ({
  statefulsets: ns ? `/apis/apps/v1/namespaces/${ns}/statefulsets` : "/apis/apps/v1/statefulsets",
  claims: ns ? `/api/v1/namespaces/${ns}/persistentvolumeclaims` : "/api/v1/persistentvolumeclaims",
  pods: ns ? `/api/v1/namespaces/${ns}/pods` : "/api/v1/pods",
});

/** Watches, maps events to opted-in sets, debounces, sends. */
export class Relay {
  private readonly sets = new Map<string, TrackedSet>();
  private readonly watches: ResilientWatch[] = [];
  private readonly debouncer: Debouncer;
  private readonly log: (entry: Record<string, unknown>) => void;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Sets whose delivery is running. */
  private readonly delivering = new Set<string>();
  /** Causes that arrived while a set's delivery ran: its one follow-up. */
  private readonly followUps = new Map<string, Set<string>>();
  /**
   * Opted-in sets deleted while tracked, until their delivery: claimstep's re-create deletes a set
   * (orphan) and the step this event causes creates it again from its record. A set deleted for
   * good answers that step with a NotFound, and nothing more is sent for it.
   */
  private readonly deleted = new Map<string, SetRef>();
  private stopped = false;

  constructor(private readonly opts: RelayOptions) {
    this.log = opts.log ?? (() => {});
    this.debouncer = new Debouncer(opts.clock, opts.debounce ?? DEFAULT_DEBOUNCE, (key, causes) =>
      this.emit(key, causes),
    );
  }

  start(): void {
    const scopes = this.opts.namespaces.length ? this.opts.namespaces : [undefined];
    for (const ns of scopes) {
      const p = paths(ns);
      // StatefulSets first: the claim and pod watches map onto the sets they know of.
      this.watch(
        p.statefulsets,
        (type, obj) => this.onStatefulSet(type, obj),
        (items) => this.onStatefulSetResync(ns, items),
      );
      this.watch(
        p.claims,
        (type, obj) => this.onClaim(type, obj),
        () => {},
      );
      this.watch(
        p.pods,
        (type, obj) => this.onPod(type, obj),
        () => {},
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.watches) w.stop();
    this.debouncer.cancelAll();
    this.followUps.clear();
    await Promise.all([...this.watches.map((w) => w.finished), ...this.inflight]);
  }

  /** Opted-in sets currently tracked (for tests and logs). */
  tracked(): SetRef[] {
    return [...this.sets.values()].map((s) => s.ref);
  }

  private watch(
    path: string,
    onObject: ResilientWatchOptions["onObject"],
    onResync: ResilientWatchOptions["onResync"],
  ): void {
    this.watches.push(
      new ResilientWatch({
        source: this.opts.source,
        clock: this.opts.clock,
        path,
        onObject,
        onResync,
        log: this.log,
        ...(this.opts.backoff ? { backoff: this.opts.backoff } : {}),
      }),
    );
  }

  private onStatefulSet(type: WatchEvent["type"], sts: any): void {
    const ref = { namespace: sts?.metadata?.namespace ?? "default", name: sts?.metadata?.name };
    if (typeof ref.name !== "string") return;
    const key = keyOf(ref);
    if (type === "DELETED" && this.sets.has(key)) {
      this.sets.delete(key);
      this.deleted.set(key, ref);
      this.debouncer.touch(key, `statefulset ${ref.name} deleted`);
      return;
    }
    if (type === "DELETED" || !optedIn(sts)) {
      this.sets.delete(key);
      return;
    }
    this.deleted.delete(key);
    this.sets.set(key, {
      ref,
      matchLabels: sts.spec?.selector?.matchLabels ?? {},
      templates: (sts.spec?.volumeClaimTemplates ?? [])
        .map((t: any) => t?.metadata?.name)
        .filter((n: unknown) => typeof n === "string"),
    });
    // A set change (new desired templates, opt-in, scale) is itself a reason to step.
    this.debouncer.touch(key, `statefulset ${ref.name} ${type.toLowerCase()}`);
  }

  private onStatefulSetResync(ns: string | undefined, items: any[]): void {
    const present = new Set(
      items.map((s) => keyOf({ namespace: s?.metadata?.namespace ?? "default", name: s?.metadata?.name })),
    );
    for (const [key, tracked] of [...this.sets]) {
      if ((ns === undefined || key.startsWith(`${ns}/`)) && !present.has(key)) {
        // Gone while the watch was down: delivered as a deletion (a re-create's orphan delete).
        this.sets.delete(key);
        this.deleted.set(key, tracked.ref);
        this.debouncer.touch(key, `statefulset ${tracked.ref.name} deleted`);
      }
    }
  }

  /** PVC `<template>-<set>-<ordinal>` carrying the set's selector labels. */
  private onClaim(type: WatchEvent["type"], pvc: any): void {
    const name: unknown = pvc?.metadata?.name;
    const ns = pvc?.metadata?.namespace ?? "default";
    if (typeof name !== "string") return;
    for (const s of this.sets.values()) {
      if (s.ref.namespace !== ns || !labelsMatch(pvc.metadata.labels, s.matchLabels)) continue;
      if (s.templates.some((t) => claimOrdinal(name, t, s.ref.name) !== undefined)) {
        this.debouncer.touch(keyOf(s.ref), `pvc ${name} ${type.toLowerCase()}`);
      }
    }
  }

  /** Pod `<set>-<ordinal>` owned by the set. */
  private onPod(type: WatchEvent["type"], pod: any): void {
    const name: unknown = pod?.metadata?.name;
    const ns = pod?.metadata?.namespace ?? "default";
    if (typeof name !== "string") return;
    const owner = (pod.metadata.ownerReferences ?? []).find((o: any) => o?.kind === "StatefulSet" && o?.controller);
    const setName = owner?.name ?? ordinalSuffix.exec(name)?.[1];
    const s = setName ? this.sets.get(keyOf({ namespace: ns, name: setName })) : undefined;
    if (s && labelsMatch(pod.metadata.labels, s.matchLabels))
      this.debouncer.touch(keyOf(s.ref), `pod ${name} ${type.toLowerCase()}`);
  }

  private emit(key: string, causes: string[]): void {
    if (this.stopped) return;
    if (this.delivering.has(key)) {
      // One delivery per set at a time: this burst waits for it, merged with any other.
      const merged = this.followUps.get(key) ?? new Set<string>();
      for (const c of causes) if (merged.size < MAX_CAUSES) merged.add(c);
      this.followUps.set(key, merged);
      return;
    }
    const s = this.sets.get(key) ?? (this.deleted.has(key) ? { ref: this.deleted.get(key)! } : undefined);
    this.deleted.delete(key);
    if (!s) return; // opted out while debouncing
    const event: RelayEvent = {
      type: "statefulset.changed",
      timestamp: this.opts.clock.now().toISOString(),
      data: { namespace: s.ref.namespace, name: s.ref.name, causes: causes.slice(0, MAX_CAUSES) },
    };
    this.log({ msg: "relay event", namespace: s.ref.namespace, name: s.ref.name, causes: causes.length });
    this.delivering.add(key);
    const p = this.opts
      .send(event)
      .catch((err) => this.log({ msg: "relay send failed", error: (err as Error).message }))
      .finally(() => {
        this.inflight.delete(p);
        this.delivering.delete(key);
        const next = this.followUps.get(key);
        this.followUps.delete(key);
        if (next) this.emit(key, [...next]);
      });
    this.inflight.add(p);
  }
}
