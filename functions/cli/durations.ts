// Durations on the command line (`--interval`, `--timeout`), as Go and kubectl write them.
import { UsageError } from "./flags.js";

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A duration as Go (and so kubectl) writes it: `500ms`, `5s`, `2m`, `1h`, `1m30s`, `1h2m3.5s`
 * (units ns, us, ms, s, m, h); also plain seconds (`30`). Never negative. In milliseconds,
 * rounded up (a duration that is not zero never becomes zero).
 */
export function parseDuration(s: string, flag: string): number {
  const text = s.trim();
  const refuse = (why: string) => new UsageError(`--${flag} ${JSON.stringify(s)}: ${why}`);
  if (text.startsWith("-")) throw refuse("a duration cannot be negative");
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) at = -1;
    if (!m) break;
    ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    at = part.lastIndex;
  }
  if (!text || at !== text.length) throw refuse("expected a duration such as 500ms, 5s, 2m, 1h or 1m30s");
  return Math.ceil(ms - 1e-9);
}
