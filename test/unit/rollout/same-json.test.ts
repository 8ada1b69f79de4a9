import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/rollout/pod-template-hash.ts';
import { sameJson } from '../../../src/rollout/same-json.ts';

/** A small deterministic generator (mulberry32), so a failing pair can be replayed from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LEAVES: unknown[] = [undefined, null, 0, -0, 1, NaN, Infinity, '', '0', 'web:1', true, false];
const KEYS = ['a', 'b', 'status', '__proto__', 'weights'];

/** A random JSON-ish value, with the leaves canonical JSON treats alike (undefined/null/NaN) on purpose. */
function randomValue(random: () => number, depth: number): unknown {
  const roll = random();
  if (depth === 0 || roll < 0.4) return LEAVES[Math.floor(random() * LEAVES.length)];
  if (roll < 0.6)
    return Array.from({ length: Math.floor(random() * 3) }, () => randomValue(random, depth - 1));
  const out: Record<string, unknown> = {};
  for (const key of KEYS) {
    if (random() < 0.5) continue;
    Object.defineProperty(out, key, {
      value: randomValue(random, depth - 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** `value` edited at one random place (or not at all), so that equal and nearly equal pairs are common. */
function nearCopy(random: () => number, value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || random() < 0.2) {
    return random() < 0.5 ? value : randomValue(random, depth);
  }
  if (Array.isArray(value))
    return value.map((member) => (random() < 0.3 ? nearCopy(random, member, depth) : member));
  const out: Record<string, unknown> = {};
  // Another key order: canonical JSON sorts keys, so order never makes two values differ.
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, {
      value:
        random() < 0.3
          ? nearCopy(random, (value as Record<string, unknown>)[key], depth)
          : (value as Record<string, unknown>)[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

describe('sameJson', () => {
  it('says what comparing the two canonical JSON strings says, on 20,000 random pairs', () => {
    const random = generator(37);
    let equal = 0;
    const disagreements: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const a = randomValue(random, 4);
      const b = nearCopy(random, a, 3);
      const expected = canonicalJson(a) === canonicalJson(b);
      if (expected) equal += 1;
      if (sameJson(a, b) !== expected && disagreements.length < 5)
        disagreements.push(`${canonicalJson(a)} vs ${canonicalJson(b)}`);
    }
    expect(disagreements).toEqual([]);
    // Both answers are well represented, so neither side of the comparison goes untested.
    expect(equal).toBeGreaterThan(2_000);
    expect(equal).toBeLessThan(18_000);
  });

  it('treats an undefined member as absent and key order as nothing, like canonical JSON', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ b: [1, { c: 'x' }], a: null }, { a: null, b: [1, { c: 'x' }] })).toBe(true);
    expect(sameJson({ a: null }, {})).toBe(false);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson([], {})).toBe(false);
  });

  it('reads a parsed __proto__ member as a member, never the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {}}') as Record<string, unknown>;
    expect(sameJson(parsed, {})).toBe(false);
    expect(sameJson({}, parsed)).toBe(false);
    expect(sameJson(parsed, JSON.parse('{"__proto__": {}}'))).toBe(true);
  });
});
