// Zod issues → the messages a user needs ("must be an integer, got \"three\""), used as a per-parse error map.
import type { z } from 'zod';

type RawIssue = z.core.$ZodRawIssue;

/** Describes a value briefly for "got …" (strings quoted and cut, objects by their kind). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}

// What a schema expects, in words. `z.int()` is a number schema with an integer format.
function describeSchema(schema: unknown): string {
  const def = (schema as { _zod?: { def?: { type?: string; format?: string } } } | undefined)?._zod?.def;
  switch (def?.type) {
    case 'number':
      return def.format !== undefined && /int/.test(def.format) ? 'an integer' : 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'object':
    case 'record':
      return 'a mapping';
    case 'array':
      return 'a list';
    default:
      return def?.type ?? 'a value';
  }
}

// zod reports `z.int()` failures as expected "number" (wrong type) or "int" (a fraction).
function describeExpected(expected: string, schema: unknown): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'number') return describeSchema(schema);
  if (expected === 'string') return 'a string';
  if (expected === 'boolean') return 'true or false';
  if (expected === 'object' || expected === 'record' || expected === 'map') return 'a mapping';
  if (expected === 'array') return 'a list';
  return expected;
}

/**
 * The per-parse zod error map. Schema-level messages (e.g. setWeight's "must be between 0 and 100")
 * take precedence over it; everything else gets a plain-English message here.
 */
export function issueMessage(issue: RawIssue): string {
  const got = describeValue(issue.input);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'required';
      return `must be ${describeExpected(issue.expected, issue.inst)}, got ${got}`;
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'array' || issue.origin === 'set')
        return `must have at least ${min} item${min === '1' ? '' : 's'}`;
      if (issue.origin === 'string')
        return min === '1' ? 'must not be empty' : `must be at least ${min} characters`;
      return `must be ${issue.inclusive === false ? '>' : '>='} ${min}, got ${got}`;
    }
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} items`;
      if (issue.origin === 'string') return `must be at most ${max} characters`;
      return `must be ${issue.inclusive === false ? '<' : '<='} ${max}, got ${got}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}, got ${got}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${got}`;
    case 'invalid_union': {
      if (issue.input === undefined) return 'required';
      const options = (issue.inst as { _zod?: { def?: { options?: unknown[] } } } | undefined)?._zod?.def
        ?.options;
      const kinds = [...new Set((options ?? []).map(describeSchema))];
      return kinds.length > 0 ? `must be ${kinds.join(' or ')}, got ${got}` : `is not valid, got ${got}`;
    }
    case 'invalid_format':
      return `must be a valid ${issue.format}, got ${got}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}`;
    default:
      return `is not valid, got ${got}`;
  }
}
