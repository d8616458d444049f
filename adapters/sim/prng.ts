// A seeded PRNG (mulberry32): every random choice of the simulation comes from here, so a seed
// replays the same run.
export class Prng {
  private current: number;

  constructor(seed: number) {
    this.current = seed >>> 0;
  }

  /** The generator's whole state: another Prng given it by `restore` continues the same sequence. */
  state(): number {
    return this.current;
  }

  /** Continue from a state `state()` returned. */
  restore(state: number): void {
    this.current = state >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.current = (this.current + 0x6d2b79f5) >>> 0;
    let t = this.current;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** A UUID-shaped id (version 4 layout), deterministic per seed. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => Math.floor(this.next() * 16).toString(16)).join("");
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[this.int(0, 3)]}${hex(3)}-${hex(12)}`;
  }

  /** The random suffix the API server appends to a generateName (5 chars, no vowels). */
  nameSuffix(): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    return Array.from({ length: 5 }, () => alphabet[this.int(0, alphabet.length - 1)]).join("");
  }
}
