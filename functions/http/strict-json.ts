// What JSON.parse lets through silently, found in the text itself: a key given twice in one object
// (JSON.parse keeps the last: {"dryRun":true,"dryRun":false} is a real step) and a number that is
// an integer a double cannot hold exactly (9007199254740993 becomes …992). One pass over the
// text, no recursion (nesting costs a frame in an array, not the stack), each key kept once in
// its object's set: linear in the length of the text, which the body limit bounds.

export interface StrictJsonProblem {
  /** Where, as the 400's issues name paths: `data.name`, `0.spec.resources` ("(body)" for the top). */
  path: string;
  message: string;
  /** The problem in a few words, for a one-line message: `the key "dryRun" is given twice`. */
  what: string;
  /** The key given twice, when that is the problem. */
  key?: string;
}

interface Frame {
  /** An object's keys so far; undefined for an array. */
  keys: Set<string> | undefined;
  /** The object's current key, or the array's current index. */
  at: string | number;
  /** An object waiting for a key (after `{` or `,`). */
  expectKey: boolean;
}

const pathOf = (frames: readonly Frame[]): string =>
  frames.length ? frames.map((f) => String(f.at)).join(".") : "(body)";

const shown = (token: string) => (token.length > 40 ? `${token.slice(0, 40)}…` : token);

const isNumberChar = (ch: number) =>
  (ch >= 48 && ch <= 57) || ch === 45 || ch === 43 || ch === 46 || ch === 101 || ch === 69; // 0-9 - + . e E

/**
 * The first key given twice or inexact integer in `text`, which JSON.parse has accepted (on
 * other text it still ends, and finds what it finds). Keys are compared as JSON.parse decodes
 * them (`"dry\u0052un"` is `dryRun`).
 */
export function strictJsonProblem(text: string): StrictJsonProblem | undefined {
  const frames: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ch = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (ch === 34) {
      // A string: to the closing quote, escapes skipped.
      let j = i + 1;
      let escaped = false;
      for (; j < n; j++) {
        const c = text.charCodeAt(j);
        if (c === 92) {
          escaped = true;
          j++;
        } else if (c === 34) break;
      }
      if (top?.keys && top.expectKey) {
        let key = text.slice(i + 1, j);
        if (escaped) {
          try {
            key = JSON.parse(text.slice(i, j + 1)) as string;
          } catch {
            // not JSON: keep the raw text
          }
        }
        top.at = key;
        top.expectKey = false;
        if (top.keys.has(key)) {
          const what = `the key "${shown(key)}" is given twice`;
          return { path: pathOf(frames), message: `${what}: send it once`, what, key };
        }
        top.keys.add(key);
      }
      i = j + 1;
    } else if (ch === 123) {
      frames.push({ keys: new Set(), at: "", expectKey: true });
      i++;
    } else if (ch === 91) {
      frames.push({ keys: undefined, at: 0, expectKey: false });
      i++;
    } else if (ch === 125 || ch === 93) {
      frames.pop();
      i++;
    } else if (ch === 44) {
      if (top?.keys) top.expectKey = true;
      else if (top) top.at = (top.at as number) + 1;
      i++;
    } else if (ch === 45 || (ch >= 48 && ch <= 57)) {
      // A number starts with - or a digit (the e of true and false is not one).
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      const token = text.slice(i, j);
      // Up to 15 digits without a fraction or an exponent is always exact: the common case, no conversion.
      if (j - i > 15 || /[.eE]/.test(token)) {
        const value = Number(token);
        if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
          const what = `the number ${shown(token)} is beyond ±(2^53 - 1) and would be rounded`;
          return { path: pathOf(frames), message: `${what}: send it as a string`, what };
        }
      }
      i = j;
    } else i++; // whitespace, ':', true/false/null
  }
  return undefined;
}
