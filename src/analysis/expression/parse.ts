// The parser for analysis conditions: a Pratt parser from tokens to an ExpressionNode tree.
import type { BinaryOperator, ExpressionNode } from './ast.ts';
import { BUILTIN_FUNCTIONS, PREDICATE_FUNCTIONS } from './builtin-functions.ts';
import { ExpressionLimitError } from './expression-limit-error.ts';
import { EXPRESSION_LIMITS } from './expression-limits.ts';
import { ExpressionSyntaxError } from './expression-syntax-error.ts';
import { tokenize, type Token } from './tokenize.ts';

/** Names an expression may never use, even as a member: they lead out of plain data into the runtime. */
export const FORBIDDEN_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

type InfixOperator = BinaryOperator | '?';

interface InfixRule {
  op: InfixOperator;
  bp: number;
  rightAssoc: boolean;
  /** Tokens consumed (2 for `not in`). */
  width: number;
}

// Binding powers follow expr-lang, so conditions copied from Argo parse the same way. One power per
// operator, whatever its spelling (`||` and `or`, `**` and `^`).
const BINDING_POWER: Readonly<Record<InfixOperator, number>> = {
  '?': 5,
  '||': 10,
  '&&': 15,
  '==': 20,
  '!=': 20,
  '<': 20,
  '<=': 20,
  '>': 20,
  '>=': 20,
  in: 20,
  'not in': 20,
  contains: 20,
  startsWith: 20,
  endsWith: 20,
  '+': 30,
  '-': 30,
  '*': 60,
  '/': 60,
  '%': 60,
  '**': 100,
  '??': 500,
};
const RIGHT_ASSOCIATIVE: ReadonlySet<InfixOperator> = new Set(['?', '**']);

function infixRule(op: InfixOperator, width = 1): InfixRule {
  return { op, bp: BINDING_POWER[op], rightAssoc: RIGHT_ASSOCIATIVE.has(op), width };
}

/**
 * The rule for each spelling the tokenizer may read: operators spelt as themselves, plus aliases.
 * Maps, not object literals: a name like `constructor` must not find Object.prototype members.
 */
function rulesBySpelling(
  operators: readonly InfixOperator[],
  aliases: Readonly<Record<string, InfixOperator>>,
): ReadonlyMap<string, InfixRule> {
  const spellings: Array<[string, InfixOperator]> = [
    ...operators.map((op): [string, InfixOperator] => [op, op]),
    ...Object.entries(aliases),
  ];
  return new Map(spellings.map(([spelling, op]) => [spelling, infixRule(op)]));
}

const SYMBOL_INFIX = rulesBySpelling(
  ['?', '||', '&&', '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', '**', '??'],
  { '^': '**' },
);
const WORD_INFIX = rulesBySpelling(['in', 'contains', 'startsWith', 'endsWith'], { or: '||', and: '&&' });
const NOT_IN = infixRule('not in', 2);

const UNARY_NOT_BP = 50;
const UNARY_SIGN_BP = 90;

const KEYWORDS = new Set([
  'true',
  'false',
  'nil',
  'and',
  'or',
  'not',
  'in',
  'matches',
  'let',
  'contains',
  'startsWith',
  'endsWith',
]);

/** What the parser needs to know beyond the text. */
export interface ParseOptions {
  /** Variables the expression may read (Argo conditions see only `result`). */
  variables: ReadonlySet<string>;
}

/** Parses `source` into a tree, refusing unknown names, calls of anything but built-ins, and excess nesting. */
export function parseExpression(source: string, options: ParseOptions): ExpressionNode {
  if (source.length > EXPRESSION_LIMITS.maxLength) {
    throw new ExpressionLimitError('length', EXPRESSION_LIMITS.maxLength, source, 1);
  }
  return new Parser(source, tokenize(source), options).parseAll();
}

class Parser {
  private index = 0;
  private depth = 0;
  /** How many predicate bodies enclose the current position (`#` is valid only inside one). */
  private closureDepth = 0;

  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
    private readonly options: ParseOptions,
  ) {}

  parseAll(): ExpressionNode {
    if (this.peek().kind === 'eof') this.fail('empty expression', this.peek());
    const node = this.parseExpr(0);
    const rest = this.peek();
    if (rest.kind !== 'eof') this.fail(`unexpected ${describe(rest)}`, rest);
    return node;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (this.index < this.tokens.length - 1) this.index++;
    return token;
  }

  private isOp(value: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && t.value === value;
  }

  private expectOp(value: string): Token {
    const t = this.next();
    if (t.kind !== 'op' || t.value !== value) this.fail(`expected "${value}" but found ${describe(t)}`, t);
    return t;
  }

  private fail(reason: string, token: Token): never {
    throw new ExpressionSyntaxError(reason, this.source, token.pos + 1);
  }

  private enter(token: Token): void {
    if (++this.depth > EXPRESSION_LIMITS.maxDepth) {
      throw new ExpressionLimitError('depth', EXPRESSION_LIMITS.maxDepth, this.source, token.pos + 1);
    }
  }

  private infixRule(): InfixRule | undefined {
    const t = this.peek();
    if (t.kind === 'op') return SYMBOL_INFIX.get(t.value);
    if (t.kind !== 'name') return undefined;
    if (t.value === 'not') {
      const after = this.peek(1);
      return after.kind === 'name' && after.value === 'in' ? NOT_IN : undefined;
    }
    if (t.value === 'matches')
      this.fail('the "matches" operator is not supported (regular expressions can stall)', t);
    return WORD_INFIX.get(t.value);
  }

  private parseExpr(minBp: number): ExpressionNode {
    this.enter(this.peek());
    let left = this.parsePrefix();
    for (;;) {
      const rule = this.infixRule();
      if (rule === undefined || rule.bp <= minBp) break;
      const opToken = this.peek();
      this.index += rule.width;
      if (rule.op === '?') {
        const then = this.parseExpr(0);
        this.expectOp(':');
        const otherwise = this.parseExpr(rule.bp - 1);
        left = { kind: 'conditional', test: left, then, otherwise, pos: opToken.pos };
        continue;
      }
      const right = this.parseExpr(rule.rightAssoc ? rule.bp - 1 : rule.bp);
      left = { kind: 'binary', op: rule.op, left, right, pos: opToken.pos };
    }
    this.depth--;
    return left;
  }

  private parsePrefix(): ExpressionNode {
    const t = this.next();
    switch (t.kind) {
      case 'number':
        return this.parsePostfix({ kind: 'literal', value: t.value, pos: t.pos });
      case 'string':
        return this.parsePostfix({ kind: 'literal', value: t.value, pos: t.pos });
      case 'eof':
        return this.fail('unexpected end of expression', t);
      case 'name':
        return this.parsePostfix(this.parseName(t));
      case 'op':
        break;
    }
    switch (t.value) {
      case '!':
        return { kind: 'unary', op: '!', operand: this.parseExpr(UNARY_NOT_BP), pos: t.pos };
      case '-':
      case '+':
        return { kind: 'unary', op: t.value, operand: this.parseExpr(UNARY_SIGN_BP), pos: t.pos };
      case '(': {
        const inner = this.parseExpr(0);
        this.expectOp(')');
        return this.parsePostfix(inner);
      }
      case '[': {
        const elements: ExpressionNode[] = [];
        while (!this.isOp(']')) {
          elements.push(this.parseExpr(0));
          if (!this.isOp(',')) break;
          this.next();
        }
        this.expectOp(']');
        return this.parsePostfix({ kind: 'array', elements, pos: t.pos });
      }
      case '{':
        return this.parsePostfix(this.parseMap(t));
      case '#':
        if (this.closureDepth === 0)
          this.fail('"#" is only valid inside a predicate such as all(result, {# > 0})', t);
        return this.parsePostfix({ kind: 'pointer', pos: t.pos });
      case '.': {
        // `.field` inside a predicate is short for `#.field`, as in expr-lang.
        if (this.closureDepth === 0) this.fail('unexpected "."', t);
        const name = this.next();
        if (name.kind !== 'name') this.fail('expected a field name after "."', name);
        return this.parsePostfix(this.member({ kind: 'pointer', pos: t.pos }, name, false));
      }
      default:
        return this.fail(`unexpected ${describe(t)}`, t);
    }
  }

  private parseName(t: Token & { kind: 'name' }): ExpressionNode {
    const name = t.value;
    if (FORBIDDEN_NAMES.has(name)) this.fail(`"${name}" may not be used`, t);
    if (name === 'true' || name === 'false') return { kind: 'literal', value: name === 'true', pos: t.pos };
    if (name === 'nil') return { kind: 'literal', value: null, pos: t.pos };
    if (name === 'not') return { kind: 'unary', op: '!', operand: this.parseExpr(UNARY_NOT_BP), pos: t.pos };
    if (this.isOp('(')) return this.parseCall(t);
    if (this.options.variables.has(name)) return { kind: 'variable', name, pos: t.pos };
    if (Object.hasOwn(BUILTIN_FUNCTIONS, name) || PREDICATE_FUNCTIONS.has(name)) {
      this.fail(`function ${name} must be called`, t);
    }
    if (KEYWORDS.has(name)) this.fail(`unexpected keyword "${name}"`, t);
    return this.fail(
      `unknown name "${name}" (conditions can use: ${[...this.options.variables].join(', ')})`,
      t,
    );
  }

  private parseCall(t: Token & { kind: 'name' }): ExpressionNode {
    const name = t.value;
    const predicate = PREDICATE_FUNCTIONS.has(name);
    if (!predicate && !Object.hasOwn(BUILTIN_FUNCTIONS, name)) this.fail(`unknown function "${name}"`, t);
    this.expectOp('(');
    const args: ExpressionNode[] = [];
    while (!this.isOp(')')) {
      if (predicate && args.length === 1) args.push(this.parseClosure());
      else args.push(this.parseExpr(0));
      if (!this.isOp(',')) break;
      this.next();
    }
    this.expectOp(')');
    if (predicate && args.length !== 2)
      this.fail(`${name} takes a collection and a predicate, e.g. ${name}(result, {# > 0})`, t);
    return { kind: 'call', name, args, pos: t.pos };
  }

  /** A predicate: `{ body }` or a bare body, both evaluated per element with `#` bound. */
  private parseClosure(): ExpressionNode {
    const start = this.peek();
    this.closureDepth++;
    let body: ExpressionNode;
    if (this.isOp('{')) {
      this.next();
      body = this.parseExpr(0);
      this.expectOp('}');
    } else {
      body = this.parseExpr(0);
    }
    this.closureDepth--;
    return { kind: 'closure', body, pos: start.pos };
  }

  private parseMap(open: Token): ExpressionNode {
    const entries: Array<{ key: string; value: ExpressionNode }> = [];
    while (!this.isOp('}')) {
      const keyToken = this.next();
      let key: string;
      if (keyToken.kind === 'name' || keyToken.kind === 'string') key = keyToken.value;
      else if (keyToken.kind === 'number') key = String(keyToken.value);
      else return this.fail(`expected a map key but found ${describe(keyToken)}`, keyToken);
      if (FORBIDDEN_NAMES.has(key)) this.fail(`"${key}" may not be used`, keyToken);
      this.expectOp(':');
      entries.push({ key, value: this.parseExpr(0) });
      if (!this.isOp(',')) break;
      this.next();
    }
    this.expectOp('}');
    return { kind: 'map', entries, pos: open.pos };
  }

  private member(object: ExpressionNode, name: Token, optional: boolean): ExpressionNode {
    if (name.kind !== 'name') this.fail(`expected a field name but found ${describe(name)}`, name);
    if (FORBIDDEN_NAMES.has(name.value)) this.fail(`"${name.value}" may not be used`, name);
    return {
      kind: 'member',
      object,
      property: { kind: 'literal', value: name.value, pos: name.pos },
      optional,
      pos: name.pos,
    };
  }

  private parsePostfix(node: ExpressionNode): ExpressionNode {
    let current = node;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op') return current;
      if (t.value === '.' || t.value === '?.') {
        this.next();
        const optional = t.value === '?.';
        if (optional && this.isOp('[')) {
          current = this.parseIndex(current, true);
          continue;
        }
        current = this.member(current, this.next(), optional);
        if (this.isOp('(')) this.fail('only built-in functions can be called', this.peek());
      } else if (t.value === '[') {
        current = this.parseIndex(current, false);
      } else if (t.value === '(') {
        return this.fail('only built-in functions can be called', t);
      } else {
        return current;
      }
    }
  }

  private parseIndex(object: ExpressionNode, optional: boolean): ExpressionNode {
    const open = this.expectOp('[');
    this.enter(open);
    let from: ExpressionNode | undefined;
    if (!this.isOp(':')) from = this.parseExpr(0);
    if (this.isOp(':')) {
      this.next();
      const to = this.isOp(']') ? undefined : this.parseExpr(0);
      this.expectOp(']');
      this.depth--;
      return { kind: 'slice', object, ...(from && { from }), ...(to && { to }), pos: open.pos };
    }
    this.expectOp(']');
    this.depth--;
    if (from === undefined) return this.fail('empty index', open);
    if (from.kind === 'literal' && typeof from.value === 'string' && FORBIDDEN_NAMES.has(from.value)) {
      this.fail(`"${from.value}" may not be used`, open);
    }
    return { kind: 'member', object, property: from, optional, pos: open.pos };
  }
}

function describe(t: Token): string {
  if (t.kind === 'eof') return 'end of expression';
  if (t.kind === 'string') return `string ${JSON.stringify(t.value)}`;
  return `"${String(t.value)}"`;
}
