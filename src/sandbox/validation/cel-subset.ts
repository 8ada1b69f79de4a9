// A small subset of CEL, enough for most `x-kubernetes-validations` rules of the upstream traffic CRDs.
// Anything outside it (an unknown function, a missing field read without has(), a type mismatch) makes
// the rule "not evaluated" rather than failed, so the sandbox never refuses what it cannot judge.
import { isPlainObject } from '../controllers/kube-object.ts';
import { jsonEqual } from '../patch/json-equal.ts';

/** Thrown for CEL the subset does not cover, and for evaluation errors; the rule is then skipped. */
export class CelUnsupportedError extends Error {
  override readonly name = 'CelUnsupportedError';
  readonly code = 'sandbox.cel.unsupported';
}

type Token =
  | { kind: 'num'; value: number }
  | { kind: 'str'; value: string }
  | { kind: 'id'; value: string }
  | { kind: 'op'; value: string };

type Expr =
  | { t: 'lit'; value: unknown }
  | { t: 'id'; name: string }
  | { t: 'list'; items: Expr[] }
  | { t: 'field'; target: Expr; name: string }
  | { t: 'index'; target: Expr; index: Expr }
  | { t: 'call'; target: Expr | undefined; name: string; args: Expr[] }
  | { t: 'unary'; op: string; arg: Expr }
  | { t: 'binary'; op: string; left: Expr; right: Expr }
  | { t: 'cond'; test: Expr; then: Expr; else: Expr };

const OPERATORS = [
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '!',
  '?',
  ':',
  '(',
  ')',
  '[',
  ']',
  '.',
  ',',
  '+',
  '-',
  '*',
  '/',
  '%',
];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] ?? '';
    if (/\s/.test(c)) {
      i += 1;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?[uU]?/.exec(source.slice(i))?.[0] ?? c;
      tokens.push({ kind: 'num', value: Number(m.replace(/[uU]$/, '')) });
      i += m.length;
    } else if (c === "'" || c === '"') {
      if (source.startsWith(c.repeat(3), i)) throw new CelUnsupportedError('triple-quoted string');
      let value = '';
      i += 1;
      while (i < source.length && source[i] !== c) {
        if (source[i] === '\\') {
          const next = source[i + 1] ?? '';
          const escapes: Record<string, string> = {
            n: '\n',
            t: '\t',
            r: '\r',
            '\\': '\\',
            "'": "'",
            '"': '"',
          };
          if (!(next in escapes)) throw new CelUnsupportedError(`escape \\${next}`);
          value += escapes[next];
          i += 2;
        } else {
          value += source[i];
          i += 1;
        }
      }
      if (source[i] !== c) throw new CelUnsupportedError('unterminated string');
      tokens.push({ kind: 'str', value });
      i += 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))?.[0] ?? c;
      if ((m === 'r' || m === 'R' || m === 'b' || m === 'B') && /['"]/.test(source[i + 1] ?? '')) {
        throw new CelUnsupportedError('raw or bytes literal');
      }
      tokens.push({ kind: 'id', value: m });
      i += m.length;
    } else {
      const op = OPERATORS.find((o) => source.startsWith(o, i));
      if (!op) throw new CelUnsupportedError(`character ${c}`);
      tokens.push({ kind: 'op', value: op });
      i += op.length;
    }
  }
  return tokens;
}

/** Recursive descent over CEL's precedence: ?: < || < && < relations < + - < * / % < unary < member. */
class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Expr {
    const expr = this.conditional();
    if (this.pos !== this.tokens.length) throw new CelUnsupportedError('trailing tokens');
    return expr;
  }

  private peek(value: string): boolean {
    const t = this.tokens[this.pos];
    return t !== undefined && (t.kind === 'op' || t.kind === 'id') && t.value === value;
  }

  private take(value: string): void {
    if (!this.peek(value)) throw new CelUnsupportedError(`expected ${value}`);
    this.pos += 1;
  }

  private conditional(): Expr {
    const test = this.binary(0);
    if (!this.peek('?')) return test;
    this.take('?');
    const then = this.conditional();
    this.take(':');
    return { t: 'cond', test, then, else: this.conditional() };
  }

  private static readonly LEVELS = [
    ['||'],
    ['&&'],
    ['==', '!=', '<', '<=', '>', '>=', 'in'],
    ['+', '-'],
    ['*', '/', '%'],
  ];

  private binary(level: number): Expr {
    const ops = Parser.LEVELS[level];
    if (!ops) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const op = ops.find((o) => this.peek(o));
      if (!op) return left;
      this.pos += 1;
      left = { t: 'binary', op, left, right: this.binary(level + 1) };
    }
  }

  private unary(): Expr {
    if (this.peek('!') || this.peek('-')) {
      const op = (this.tokens[this.pos] as { value: string }).value;
      this.pos += 1;
      return { t: 'unary', op, arg: this.unary() };
    }
    return this.member();
  }

  private args(): Expr[] {
    this.take('(');
    const args: Expr[] = [];
    while (!this.peek(')')) {
      args.push(this.conditional());
      if (!this.peek(')')) this.take(',');
    }
    this.take(')');
    return args;
  }

  private member(): Expr {
    let expr = this.primary();
    for (;;) {
      if (this.peek('.')) {
        this.pos += 1;
        const name = this.tokens[this.pos];
        if (name?.kind !== 'id') throw new CelUnsupportedError('field name');
        this.pos += 1;
        expr = this.peek('(')
          ? { t: 'call', target: expr, name: name.value, args: this.args() }
          : { t: 'field', target: expr, name: name.value };
      } else if (this.peek('[')) {
        this.pos += 1;
        const index = this.conditional();
        this.take(']');
        expr = { t: 'index', target: expr, index };
      } else return expr;
    }
  }

  private primary(): Expr {
    const token = this.tokens[this.pos];
    if (!token) throw new CelUnsupportedError('unexpected end');
    this.pos += 1;
    if (token.kind === 'num' || token.kind === 'str') return { t: 'lit', value: token.value };
    if (token.kind === 'id') {
      if (token.value === 'true' || token.value === 'false')
        return { t: 'lit', value: token.value === 'true' };
      if (token.value === 'null') return { t: 'lit', value: null };
      if (this.peek('(')) return { t: 'call', target: undefined, name: token.value, args: this.args() };
      return { t: 'id', name: token.value };
    }
    if (token.value === '(') {
      const inner = this.conditional();
      this.take(')');
      return inner;
    }
    if (token.value === '[') {
      const items: Expr[] = [];
      while (!this.peek(']')) {
        items.push(this.conditional());
        if (!this.peek(']')) this.take(',');
      }
      this.take(']');
      return { t: 'list', items };
    }
    throw new CelUnsupportedError(`token ${token.value}`);
  }
}

const DURATION_UNITS: Record<string, number> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000001,
};

/** A Go duration string (`1h30m`, `0.5s`) in milliseconds, wrapped so comparisons know it is one. */
function duration(text: unknown): { duration: number } {
  if (typeof text !== 'string') throw new CelUnsupportedError('duration of a non-string');
  const parts = /^-?((\d+(\.\d+)?|\.\d+)(h|ms|m|s|us|µs|ns))+$/.test(text)
    ? text.match(/(\d+(\.\d+)?|\.\d+)(h|ms|m|s|us|µs|ns)/g)
    : null;
  if (!parts) throw new CelUnsupportedError(`invalid duration ${text}`);
  const ms = parts.reduce((sum, p) => {
    const [, n = '0', , unit = 's'] = /^(\d+(\.\d+)?|\.\d+)(.+)$/.exec(p) ?? [];
    return sum + Number(n) * (DURATION_UNITS[unit] ?? 0);
  }, 0);
  return { duration: text.startsWith('-') ? -ms : ms };
}

function comparable(v: unknown): number | string {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (isPlainObject(v) && typeof v.duration === 'number') return v.duration;
  throw new CelUnsupportedError('comparison of incomparable values');
}

function bool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw new CelUnsupportedError('non-boolean condition');
  return v;
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  throw new CelUnsupportedError('size of a scalar');
}

type Scope = ReadonlyMap<string, unknown>;

const RESERVED = new Set(
  'as break const continue else false for function if import in let loop package namespace null return true var void while'.split(
    ' ',
  ),
);

/** Kubernetes escapes property names CEL cannot spell: `__namespace__` is `namespace`, `__dash__` is `-`. */
function propertyName(name: string): string {
  const reserved = /^__([a-z]+)__$/.exec(name)?.[1];
  if (reserved !== undefined && RESERVED.has(reserved)) return reserved;
  return name
    .replace(/__underscores__/g, '__')
    .replace(/__dot__/g, '.')
    .replace(/__dash__/g, '-')
    .replace(/__slash__/g, '/');
}

function evaluate(expr: Expr, scope: Scope): unknown {
  switch (expr.t) {
    case 'lit':
      return expr.value;
    case 'id':
      if (!scope.has(expr.name)) throw new CelUnsupportedError(`unknown name ${expr.name}`);
      return scope.get(expr.name);
    case 'list':
      return expr.items.map((item) => evaluate(item, scope));
    case 'field': {
      const target = evaluate(expr.target, scope);
      const key = propertyName(expr.name);
      if (!isPlainObject(target) || !(key in target)) throw new CelUnsupportedError(`no such key ${key}`);
      return target[key];
    }
    case 'index': {
      const target = evaluate(expr.target, scope);
      const index = evaluate(expr.index, scope);
      if (Array.isArray(target) && typeof index === 'number' && index >= 0 && index < target.length)
        return target[index];
      if (isPlainObject(target) && typeof index === 'string' && index in target) return target[index];
      throw new CelUnsupportedError('index out of range');
    }
    case 'unary': {
      const arg = evaluate(expr.arg, scope);
      if (expr.op === '!') return !bool(arg);
      if (typeof arg !== 'number') throw new CelUnsupportedError('negation of a non-number');
      return -arg;
    }
    case 'cond':
      return bool(evaluate(expr.test, scope)) ? evaluate(expr.then, scope) : evaluate(expr.else, scope);
    case 'binary':
      return binary(expr, scope);
    case 'call':
      return call(expr, scope);
  }
}

function binary(expr: Extract<Expr, { t: 'binary' }>, scope: Scope): unknown {
  if (expr.op === '&&' || expr.op === '||') {
    // CEL's commutative logic: an error on one side is absorbed when the other side decides.
    const decisive = expr.op === '||';
    let left: boolean | undefined;
    try {
      left = bool(evaluate(expr.left, scope));
    } catch (err) {
      if (!(err instanceof CelUnsupportedError)) throw err;
    }
    if (left === decisive) return decisive;
    const right = bool(evaluate(expr.right, scope));
    if (left === undefined && right !== decisive) throw new CelUnsupportedError('undecided logic');
    return right;
  }
  const left = evaluate(expr.left, scope);
  const right = evaluate(expr.right, scope);
  switch (expr.op) {
    case '==':
      return jsonEqual(left, right);
    case '!=':
      return !jsonEqual(left, right);
    case 'in':
      if (Array.isArray(right)) return right.some((item) => jsonEqual(item, left));
      if (isPlainObject(right) && typeof left === 'string') return left in right;
      throw new CelUnsupportedError('in of a scalar');
    case '<':
      return comparable(left) < comparable(right);
    case '<=':
      return comparable(left) <= comparable(right);
    case '>':
      return comparable(left) > comparable(right);
    case '>=':
      return comparable(left) >= comparable(right);
    case '+':
      if (typeof left === 'number' && typeof right === 'number') return left + right;
      if (typeof left === 'string' && typeof right === 'string') return left + right;
      if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
      throw new CelUnsupportedError('+ of mixed types');
    default: {
      if (typeof left !== 'number' || typeof right !== 'number') throw new CelUnsupportedError('arithmetic');
      if (expr.op === '-') return left - right;
      if (expr.op === '*') return left * right;
      if (right === 0) throw new CelUnsupportedError('division by zero');
      return expr.op === '/' ? Math.trunc(left / right) : left % right;
    }
  }
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);

function call(expr: Extract<Expr, { t: 'call' }>, scope: Scope): unknown {
  const { name, args } = expr;
  if (expr.target === undefined) {
    if (name === 'has') {
      const field = args[0];
      if (args.length !== 1 || field?.t !== 'field') throw new CelUnsupportedError('has() of a non-field');
      const target = evaluate(field.target, scope);
      return isPlainObject(target) && propertyName(field.name) in target;
    }
    const values = args.map((a) => evaluate(a, scope));
    if (name === 'size' && values.length === 1) return sizeOf(values[0]);
    if (name === 'duration' && values.length === 1) return duration(values[0]);
    if (name === 'int' && typeof values[0] === 'number') return Math.trunc(values[0]);
    if (
      name === 'string' &&
      values.length === 1 &&
      ['string', 'number', 'boolean'].includes(typeof values[0])
    ) {
      return String(values[0]);
    }
    throw new CelUnsupportedError(`function ${name}`);
  }
  const target = evaluate(expr.target, scope);
  if (MACROS.has(name)) {
    const variable = args[0];
    const body = args[1];
    if (variable?.t !== 'id' || body === undefined || args.length !== 2)
      throw new CelUnsupportedError('macro form');
    const items = Array.isArray(target) ? target : isPlainObject(target) ? Object.keys(target) : undefined;
    if (!items) throw new CelUnsupportedError('macro over a scalar');
    const run = (item: unknown): unknown => evaluate(body, new Map([...scope, [variable.name, item]]));
    if (name === 'all') return items.every((item) => bool(run(item)));
    if (name === 'exists') return items.some((item) => bool(run(item)));
    if (name === 'exists_one') return items.filter((item) => bool(run(item))).length === 1;
    if (name === 'filter') return items.filter((item) => bool(run(item)));
    return items.map(run);
  }
  const values = args.map((a) => evaluate(a, scope));
  const arg = values[0];
  if (name === 'size' && values.length === 0) return sizeOf(target);
  if (typeof target === 'string' && typeof arg === 'string' && values.length === 1) {
    if (name === 'startsWith') return target.startsWith(arg);
    if (name === 'endsWith') return target.endsWith(arg);
    if (name === 'contains') return target.includes(arg);
    if (name === 'matches') {
      try {
        return new RegExp(arg, 'u').test(target);
      } catch {
        throw new CelUnsupportedError('pattern');
      }
    }
  }
  throw new CelUnsupportedError(`method ${name}`);
}

/** A compiled rule: evaluates to true, false, or throws {@link CelUnsupportedError} (not judged). */
export type CelProgram = (self: unknown) => boolean;

/** Compiles a rule; throws {@link CelUnsupportedError} when it is outside the subset. */
export function compileCelRule(rule: string): CelProgram {
  const expr = new Parser(tokenize(rule)).parse();
  return (self) => bool(evaluate(expr, new Map([['self', self]])));
}
