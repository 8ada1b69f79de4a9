import { describe, expect, it } from 'vitest';
import { copyJson } from '../../../src/rollout/json-copy.ts';

describe('copyJson', () => {
  it('copies every level, so editing the copy leaves the original as it was', () => {
    const original = { spec: { template: { containers: [{ name: 'app', image: 'web:1' }] } }, n: 1, x: null };
    const copy = copyJson(original);
    expect(copy).toEqual(original);
    copy.spec.template.containers[0]!.image = 'web:2';
    copy.spec.template.containers.push({ name: 'sidecar', image: 'proxy:1' });
    expect(original.spec.template.containers).toEqual([{ name: 'app', image: 'web:1' }]);
  });

  it('keeps a __proto__ member of parsed JSON a member, never the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = copyJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(copy['__proto__']).toEqual({ polluted: true });
  });

  it('copies what is not JSON (a Date) as structuredClone does', () => {
    const when = new Date('2026-01-01T00:00:00Z');
    const copy = copyJson({ when });
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(when.getTime());
  });
});
