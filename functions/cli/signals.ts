// The signals that stop a command early (SIGINT, SIGTERM) and how a command learns of one.

/** The signals that stop a command early, as a shell sends them (Ctrl-C, kill). */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/** Where interruptions come from: `on` subscribes, the function it returns unsubscribes. */
export interface Interrupts {
  on(listener: (signal: InterruptSignal) => void): () => void;
}

/** The signal that aborted `signal` (ctx.signal), when an interruption did (not a closed stdout). */
export const interruptOf = (signal: AbortSignal): InterruptSignal | undefined =>
  signal.aborted && (signal.reason === "SIGINT" || signal.reason === "SIGTERM") ? signal.reason : undefined;
