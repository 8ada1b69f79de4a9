// The time expressions of a Prometheus rangeQuery (`now() - duration("5m")`): a small pure evaluator at a given now.
import { DurationError, parseDuration } from './duration.ts';
import { TimeExpressionError } from './time-expression-error.ts';

export { TimeExpressionError } from './time-expression-error.ts';

type Value = { kind: 'time'; ms: number } | { kind: 'duration'; ms: number };

// The expression language Argo evaluates these in is expr-lang; the part of it a time bound needs is
// now(), duration("…"), date("…") and + / - between them, with parentheses. Nothing else is accepted,
// so an expression either means what it says in Argo or is refused.
const TOKEN = /\s*(?:(now|duration|date)\s*\(|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|([()+-]))/y;

class Reader {
  private at = 0;
  constructor(
    private readonly text: string,
    private readonly nowMs: number,
  ) {}

  fail(reason: string): never {
    throw new TimeExpressionError(this.text, reason);
  }

  private peekToken(): { call?: string; text?: string; op?: string; end: number } | undefined {
    TOKEN.lastIndex = this.at;
    const match = TOKEN.exec(this.text);
    if (match === null) return undefined;
    const [, call, quoted, op] = match;
    return {
      ...(call !== undefined && { call }),
      ...(quoted !== undefined && { text: quoted }),
      ...(op !== undefined && { op }),
      end: TOKEN.lastIndex,
    };
  }

  atEnd(): boolean {
    return this.text.slice(this.at).trim() === '';
  }

  sum(): Value {
    let left = this.operand();
    for (;;) {
      const token = this.peekToken();
      if (token?.op !== '+' && token?.op !== '-') return left;
      this.at = token.end;
      left = this.combine(left, token.op, this.operand());
    }
  }

  private operand(): Value {
    const token = this.peekToken();
    if (token === undefined)
      this.fail(`unexpected ${this.rest()} (expected now(), duration("…"), date("…") or "(")`);
    this.at = token.end;
    if (token.op === '(') {
      const inner = this.sum();
      this.expect(')');
      return inner;
    }
    if (token.call === 'now') {
      this.expect(')');
      return { kind: 'time', ms: this.nowMs };
    }
    if (token.call === 'duration' || token.call === 'date') {
      const argument = this.peekToken();
      if (argument?.text === undefined) this.fail(`${token.call}() takes one quoted string`);
      this.at = argument.end;
      this.expect(')');
      // Durations and dates contain no escapes; a backslash is left as written (and then refused).
      const text = argument.text.slice(1, -1);
      return token.call === 'duration' ? this.duration(text) : this.date(text);
    }
    return this.fail(`unexpected ${this.rest()} (expected now(), duration("…"), date("…") or "(")`);
  }

  private duration(text: string): Value {
    try {
      return { kind: 'duration', ms: parseDuration(text) };
    } catch (error) {
      if (error instanceof DurationError) this.fail(`duration(${JSON.stringify(text)}): ${error.message}`);
      throw error;
    }
  }

  private date(text: string): Value {
    // RFC 3339 with a zone, as Go's time.Parse(time.RFC3339, …) reads it.
    const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i.test(text)
      ? Date.parse(text)
      : Number.NaN;
    if (Number.isNaN(ms))
      this.fail(`date(${JSON.stringify(text)}): not an RFC 3339 time such as 2026-01-01T00:00:00Z`);
    return { kind: 'time', ms };
  }

  private expect(op: string): void {
    const token = this.peekToken();
    if (token?.op !== op) this.fail(`expected "${op}" at ${this.rest()}`);
    this.at = token.end;
  }

  private rest(): string {
    const rest = this.text.slice(this.at).trim();
    return rest === '' ? 'the end' : JSON.stringify(rest.slice(0, 20));
  }

  private combine(left: Value, op: string, right: Value): Value {
    if (left.kind === 'time' && right.kind === 'duration')
      return { kind: 'time', ms: op === '+' ? left.ms + right.ms : left.ms - right.ms };
    if (left.kind === 'duration' && right.kind === 'duration')
      return { kind: 'duration', ms: op === '+' ? left.ms + right.ms : left.ms - right.ms };
    if (left.kind === 'duration' && right.kind === 'time' && op === '+')
      return { kind: 'time', ms: left.ms + right.ms };
    if (left.kind === 'time' && right.kind === 'time' && op === '-')
      return { kind: 'duration', ms: left.ms - right.ms };
    return this.fail(
      `cannot ${op === '+' ? 'add' : 'subtract'} a ${right.kind} ${op === '+' ? 'to' : 'from'} a ${left.kind}`,
    );
  }
}

function evaluate(expression: string, nowMs: number): number {
  const reader = new Reader(expression, nowMs);
  const value = reader.sum();
  if (!reader.atEnd()) reader.fail('unexpected text after the expression');
  if (value.kind !== 'time')
    throw new TimeExpressionError(expression, 'is a duration, expected a time (e.g. now() - duration("5m"))');
  return value.ms;
}

/**
 * Evaluates a rangeQuery bound at `now`: `now()`, `duration("5m")` (a Go duration), `date("<RFC 3339>")`,
 * joined with + and - (time ± duration, duration ± duration, time - time) and parentheses; the
 * result must be a time.
 * @throws TimeExpressionError naming the expression and what is wrong with it.
 */
export function evaluateTimeExpression(expression: string, now: Date): Date {
  return new Date(evaluate(expression, now.getTime()));
}

/** Checks a rangeQuery bound without a clock (validate); throws like {@link evaluateTimeExpression}. */
export function checkTimeExpression(expression: string): void {
  // Any instant will do: only the expression's shape and types are checked.
  evaluate(expression, 0);
}
