// People, on a schedule: edits a person makes at a set time (`kubectl patch`), so that a scenario
// can say "a budget that allows no disruption, until someone relaxes it at 10:08". Plain data, so
// a saved cluster keeps its schedule.
import type { Json } from "../store.js";
import type { ControllerContext } from "./context.js";

/** One person's merge patch of one object, due at `atMs` (virtual ms since the epoch). */
export interface ScheduledEdit {
  atMs: number;
  resource: string;
  namespace?: string;
  name: string;
  mergePatch: Json;
  /** Who makes it, in the audit log and managedFields; default kubectl. */
  actor?: string;
}

export class People {
  private edits: ScheduledEdit[] = [];

  constructor(
    private readonly ctx: ControllerContext,
    private readonly apply: (edit: ScheduledEdit) => void,
  ) {}

  schedule(edit: ScheduledEdit): void {
    this.edits.push(structuredClone(edit));
    this.edits.sort((a, b) => a.atMs - b.atMs);
    this.ctx.clock.wakeAt(edit.atMs);
  }

  /** Make every edit that is due. */
  sync(): void {
    const now = this.ctx.clock.nowMs();
    while (this.edits.length && this.edits[0]!.atMs <= now) this.apply(this.edits.shift()!);
  }

  state(): ScheduledEdit[] {
    return structuredClone(this.edits);
  }

  restore(edits: readonly ScheduledEdit[]): void {
    this.edits = structuredClone([...edits]).sort((a, b) => a.atMs - b.atMs);
  }
}
