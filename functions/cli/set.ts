// `set`: write the desired claim template and opt the set in, then show the plan it causes. Two
// kinds: a claim template's size or class (set-claim.ts), a claim template added or removed
// (--add/--remove, set-add-remove.ts); both read, change, write and plan alike (set-write.ts).
import { ApiError } from "../../adapters/api-error.js";
import type { Context } from "./context.js";
import { setTemplates } from "./set-add-remove.js";
import { setClaim } from "./set-claim.js";

/** Attempts of `set` when its write loses a race (409: claimstep's own steps write the set's status too). */
const SET_ATTEMPTS = 4;

/**
 * `set`: read, compute the change, write it under the resourceVersion read. A write that loses its
 * race to another writer of the set (a running `claimstep serve` records its status on every step)
 * is computed again from a fresh read, as kubectl's edits do, rather than failing.
 */
export async function set(ctx: Context): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (ctx.flags.add || ctx.flags.remove ? setTemplates(ctx) : setClaim(ctx));
    } catch (err) {
      const lost = err instanceof ApiError && err.kind === "Conflict" && !err.isFieldManagerConflict;
      if (!lost || attempt >= SET_ATTEMPTS) throw err;
    }
  }
}
