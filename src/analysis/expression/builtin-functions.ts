// The functions analysis conditions may call: Argo's helpers (asInt, asFloat, isNaN, …) and expr-lang's common ones.
import { EXPRESSION_LIMITS } from './expression-limits.ts';
import { isPlainObject, ownDataValue, typeName } from './expression-value.ts';

/** A built-in: its accepted argument counts and its body; `fail` raises an evaluation error at the call. */
export interface BuiltinFunction {
  minArgs: number;
  maxArgs: number;
  call(args: unknown[], fail: (reason: string) => never): unknown;
}

/** Functions taking a collection and a predicate (`all(result, {# > 0.9})`); the evaluator runs them. */
export const PREDICATE_FUNCTIONS: ReadonlySet<string> = new Set([
  'all',
  'any',
  'none',
  'one',
  'filter',
  'map',
  'count',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
]);

const FLOAT_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT_TEXT = /^[+-]?\d+$/;

function parseFloatStrict(text: string, fail: (reason: string) => never): number {
  const t = text.trim();
  if (FLOAT_TEXT.test(t)) return Number(t);
  // Go's strconv.ParseFloat also reads these, and Prometheus reports them.
  const lower = t.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === 'inf' || lower === '+inf' || lower === 'infinity' || lower === '+infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  return fail(`cannot parse ${JSON.stringify(text.slice(0, 50))} as a float`);
}

function parseIntStrict(text: string, fail: (reason: string) => never): number {
  if (!INT_TEXT.test(text)) return fail(`cannot parse ${JSON.stringify(text.slice(0, 50))} as an int`);
  return Number(text);
}

function number(value: unknown, fn: string, fail: (reason: string) => never): number {
  if (typeof value !== 'number') return fail(`${fn} expects a number, got ${typeName(value)}`);
  return value;
}

function string(value: unknown, fn: string, fail: (reason: string) => never): string {
  if (typeof value !== 'string') return fail(`${fn} expects a string, got ${typeName(value)}`);
  return value;
}

function numbers(value: unknown, fn: string, fail: (reason: string) => never): number[] {
  if (!Array.isArray(value)) return fail(`${fn} expects an array, got ${typeName(value)}`);
  return value.map((item) => number(item, fn, fail));
}

function numericArgs(args: unknown[], fn: string, fail: (reason: string) => never): number[] {
  const list = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  if (list.length === 0) return fail(`${fn} needs at least one number`);
  return list.map((item) => number(item, fn, fail));
}

function stringify(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

const one = (call: BuiltinFunction['call']): BuiltinFunction => ({ minArgs: 1, maxArgs: 1, call });

/** Every callable built-in except the predicates. */
export const BUILTIN_FUNCTIONS: Readonly<Record<string, BuiltinFunction>> = {
  // Argo Rollouts' helpers, with the semantics of its evaluate package.
  asInt: one(([v], fail) => {
    if (typeof v === 'number') return Math.trunc(v);
    if (typeof v === 'string') return parseIntStrict(v, fail);
    return fail(`asInt: type ${typeName(v)} not supported`);
  }),
  asFloat: one(([v], fail) => {
    if (typeof v === 'number') return v;
    if (typeof v === 'string') return parseFloatStrict(v, fail);
    return fail(`asFloat: type ${typeName(v)} not supported`);
  }),
  isNaN: one(([v], fail) => Number.isNaN(number(v, 'isNaN', fail))),
  isInf: one(([v], fail) => {
    const n = number(v, 'isInf', fail);
    return n === Infinity || n === -Infinity;
  }),
  isNil: one(([v]) => v === null || v === undefined),
  default: { minArgs: 2, maxArgs: 2, call: ([v, d]) => (v === null || v === undefined ? d : v) },
  // expr-lang's common built-ins.
  len: one(([v], fail) => {
    if (typeof v === 'string') return [...v].length;
    if (Array.isArray(v)) return v.length;
    if (isPlainObject(v)) return Object.keys(v).length;
    return fail(`invalid argument for len (type ${typeName(v)})`);
  }),
  abs: one(([v], fail) => Math.abs(number(v, 'abs', fail))),
  ceil: one(([v], fail) => Math.ceil(number(v, 'ceil', fail))),
  floor: one(([v], fail) => Math.floor(number(v, 'floor', fail))),
  round: one(([v], fail) => Math.round(number(v, 'round', fail))),
  int: one(([v], fail) => {
    if (typeof v === 'number') return Math.trunc(v);
    if (typeof v === 'string') return parseIntStrict(v.trim(), fail);
    return fail(`invalid operation: int(${typeName(v)})`);
  }),
  float: one(([v], fail) => {
    if (typeof v === 'number') return v;
    if (typeof v === 'string') return parseFloatStrict(v, fail);
    return fail(`invalid operation: float(${typeName(v)})`);
  }),
  string: one(([v]) => stringify(v)),
  type: one(([v]) => typeName(v)),
  lower: one(([v], fail) => string(v, 'lower', fail).toLowerCase()),
  upper: one(([v], fail) => string(v, 'upper', fail).toUpperCase()),
  trim: one(([v], fail) => string(v, 'trim', fail).trim()),
  split: {
    minArgs: 2,
    maxArgs: 2,
    call: ([s, sep], fail) => {
      const parts = string(s, 'split', fail).split(string(sep, 'split', fail));
      if (parts.length > EXPRESSION_LIMITS.maxSize) fail('split result too large');
      return parts;
    },
  },
  join: {
    minArgs: 1,
    maxArgs: 2,
    call: ([list, sep], fail) => {
      if (!Array.isArray(list)) return fail(`join expects an array, got ${typeName(list)}`);
      const out = list
        .map((item) => string(item, 'join', fail))
        .join(sep === undefined ? '' : string(sep, 'join', fail));
      if (out.length > EXPRESSION_LIMITS.maxSize) fail('join result too large');
      return out;
    },
  },
  max: { minArgs: 1, maxArgs: Infinity, call: (args, fail) => Math.max(...numericArgs(args, 'max', fail)) },
  min: { minArgs: 1, maxArgs: Infinity, call: (args, fail) => Math.min(...numericArgs(args, 'min', fail)) },
  sum: one(([v], fail) => numbers(v, 'sum', fail).reduce((a, b) => a + b, 0)),
  mean: one(([v], fail) => {
    const list = numbers(v, 'mean', fail);
    return list.length === 0 ? 0 : list.reduce((a, b) => a + b, 0) / list.length;
  }),
  median: one(([v], fail) => {
    const list = numbers(v, 'median', fail).sort((a, b) => a - b);
    if (list.length === 0) return 0;
    const mid = Math.floor(list.length / 2);
    return list.length % 2 === 1 ? list[mid] : ((list[mid - 1] as number) + (list[mid] as number)) / 2;
  }),
  first: one(([v], fail) => {
    if (!Array.isArray(v)) return fail(`first expects an array, got ${typeName(v)}`);
    return v.length === 0 ? null : v[0];
  }),
  last: one(([v], fail) => {
    if (!Array.isArray(v)) return fail(`last expects an array, got ${typeName(v)}`);
    return v.length === 0 ? null : v[v.length - 1];
  }),
  keys: one(([v], fail) => {
    if (!isPlainObject(v)) return fail(`keys expects a map, got ${typeName(v)}`);
    return Object.keys(v);
  }),
  values: one(([v], fail) => {
    if (!isPlainObject(v)) return fail(`values expects a map, got ${typeName(v)}`);
    return Object.keys(v).map((k) => ownDataValue(v, k).value ?? null);
  }),
};
