// The Node server's log: one JSON line per entry, stamped with the time.

export type Log = (entry: Record<string, unknown>) => void;

export const jsonLog: Log = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));
