// A small deterministic PRNG (mulberry32): same seed, same names, uids and injected faults.

/** Deterministic random numbers for the sandbox; never used for anything secret. */
export class SeededRandom {
  private state: number;

  constructor(seed: number = 1) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `rate` (0 never, 1 always). */
  chance(rate: number): boolean {
    if (rate <= 0) return false;
    if (rate >= 1) return true;
    return this.next() < rate;
  }

  /** The 5-character suffix kube-apiserver appends to generateName (same alphabet, no vowels). */
  nameSuffix(): string {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    let out = '';
    for (let i = 0; i < 5; i++) out += alphabet[Math.floor(this.next() * alphabet.length)] ?? 'x';
    return out;
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const hex = (n: number): string => {
      let s = '';
      for (let i = 0; i < n; i++) s += Math.floor(this.next() * 16).toString(16);
      return s;
    };
    const variant = '89ab'[Math.floor(this.next() * 4)] ?? '8';
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
  }
}
