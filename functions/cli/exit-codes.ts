// The exit codes of a command: 0 done or progressing, 2 blocked, 1 an error; a signal's as a shell gives it.
import type { Decision } from "../../core/types.js";
import type { InterruptSignal } from "./signals.js";

export const EXIT = { ok: 0, error: 1, blocked: 2 } as const;

/** The exit code of a command a signal stopped, as shells report one it killed (128 + the signal's number). */
export const INTERRUPT_EXIT: Record<InterruptSignal, number> = { SIGINT: 130, SIGTERM: 143 };

export const exitOf = (d: Decision): number => (d.phase === "Blocked" ? EXIT.blocked : EXIT.ok);
