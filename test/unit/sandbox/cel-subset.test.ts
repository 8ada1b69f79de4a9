// The CEL subset the sandbox evaluates x-kubernetes-validations rules with; outside it, rules are not judged.
import { describe, expect, it } from 'vitest';
import { CelUnsupportedError, compileCelRule } from '../../../src/sandbox/validation/cel-subset.ts';

const holds = (rule: string, self: unknown): boolean => compileCelRule(rule)(self);

describe('CEL subset', () => {
  it('evaluates the forms the upstream traffic CRDs use', () => {
    const backend = { group: '', kind: 'Service', name: 'web' };
    const portRule = "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true";
    expect(holds(portRule, backend)).toBe(false);
    expect(holds(portRule, { ...backend, port: 80 })).toBe(true);
    expect(holds("!('*' in self && self.size() > 1)", ['*', 'GET'])).toBe(false);
    expect(holds("!('*' in self && self.size() > 1)", ['GET', 'PUT'])).toBe(true);
    expect(holds("self.filter(f, f.type == 'CORS').size() <= 1", [{ type: 'CORS' }, { type: 'CORS' }])).toBe(
      false,
    );
    expect(holds('self.all(r, r.weight >= 0)', [{ weight: 1 }, { weight: 0 }])).toBe(true);
    expect(holds("self.exists_one(b, b.name == 'a')", [{ name: 'a' }, { name: 'a' }])).toBe(false);
    expect(holds('self.numerator <= self.denominator', { numerator: 3, denominator: 2 })).toBe(false);
    expect(holds("duration(self) >= duration('1ms')", '0.5ms')).toBe(false);
    expect(holds("duration(self) >= duration('1ms')", '1h30m')).toBe(true);
    expect(holds("self.startsWith('/') && !self.endsWith('/x') && self.matches('^/[a-z]+$')", '/abc')).toBe(
      true,
    );
    expect(holds('self.__namespace__ == "team"', { namespace: 'team' })).toBe(true);
    expect(holds('self.map(k, k).size() == 2', { a: 1, b: 2 })).toBe(true);
  });

  it('absorbs an error on one side of || and && when the other side decides, as CEL does', () => {
    expect(holds('self.missing == 1 || true', {})).toBe(true);
    expect(holds('false && self.missing == 1', {})).toBe(false);
    expect(() => holds('self.missing == 1 || false', {})).toThrow(CelUnsupportedError);
  });

  it('refuses to judge what it does not cover', () => {
    expect(() => compileCelRule('self.split(",").size() > 0')).not.toThrow();
    expect(() => holds('self.split(",").size() > 0', 'a,b')).toThrow(CelUnsupportedError);
    expect(() => compileCelRule('self.matches(r"""^a$""")')).toThrow(CelUnsupportedError);
    expect(() => holds('self.value == 1', {})).toThrow(CelUnsupportedError);
    expect(() => holds("duration(self) > duration('1ms')", 'soon')).toThrow(CelUnsupportedError);
  });
});
