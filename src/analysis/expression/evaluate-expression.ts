// The evaluator for analysis conditions: walks a parsed tree over plain data, within a step budget.
import type { ExpressionNode } from './ast.ts';
import { BUILTIN_FUNCTIONS } from './builtin-functions.ts';
import { ExpressionEvaluationError } from './expression-evaluation-error.ts';
import { ExpressionLimitError } from './expression-limit-error.ts';
import { EXPRESSION_LIMITS } from './expression-limits.ts';
import { isPlainObject, ownDataValue, typeName, valuesEqual } from './expression-value.ts';
import { FORBIDDEN_NAMES } from './parse.ts';

const NO_POINTER: unique symbol = Symbol('no pointer');
type Pointer = unknown;

/** Evaluates `node` with the given variables; every failure is an ExpressionEvaluationError or ExpressionLimitError. */
export function evaluateExpression(
  node: ExpressionNode,
  scope: Readonly<Record<string, unknown>>,
  source: string,
): unknown {
  return new Evaluator(scope, source).run(node, NO_POINTER);
}

class Evaluator {
  private steps = 0;

  constructor(
    private readonly scope: Readonly<Record<string, unknown>>,
    private readonly source: string,
  ) {}

  private fail(reason: string, node: ExpressionNode): never {
    throw new ExpressionEvaluationError(reason, this.source, node.pos + 1);
  }

  private step(node: ExpressionNode): void {
    if (++this.steps > EXPRESSION_LIMITS.maxSteps) {
      throw new ExpressionLimitError('steps', EXPRESSION_LIMITS.maxSteps, this.source, node.pos + 1);
    }
  }

  private checkSize(size: number, node: ExpressionNode): void {
    if (size > EXPRESSION_LIMITS.maxSize) {
      throw new ExpressionLimitError('size', EXPRESSION_LIMITS.maxSize, this.source, node.pos + 1);
    }
  }

  private bool(value: unknown, node: ExpressionNode, what: string): boolean {
    if (typeof value !== 'boolean') this.fail(`${what} expects bool, got ${typeName(value)}`, node);
    return value;
  }

  private num(value: unknown, node: ExpressionNode, op: string): number {
    if (typeof value !== 'number') this.fail(`invalid operation: ${op} on ${typeName(value)}`, node);
    return value;
  }

  run(node: ExpressionNode, pointer: Pointer): unknown {
    this.step(node);
    switch (node.kind) {
      case 'literal':
        return node.value;
      case 'variable':
        return Object.hasOwn(this.scope, node.name) ? (this.scope[node.name] ?? null) : null;
      case 'pointer':
        if (pointer === NO_POINTER) return this.fail('"#" used outside a predicate', node);
        return pointer;
      case 'unary': {
        const value = this.run(node.operand, pointer);
        if (node.op === '!') return !this.bool(value, node, '!');
        const n = this.num(value, node, `unary ${node.op}`);
        return node.op === '-' ? -n : n;
      }
      case 'conditional':
        return this.bool(this.run(node.test, pointer), node, 'ternary')
          ? this.run(node.then, pointer)
          : this.run(node.otherwise, pointer);
      case 'binary':
        return this.binary(node, pointer);
      case 'member':
        return this.member(node, pointer);
      case 'slice':
        return this.slice(node, pointer);
      case 'array': {
        const out = node.elements.map((e) => this.run(e, pointer));
        return out;
      }
      case 'map': {
        const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
        for (const entry of node.entries) out[entry.key] = this.run(entry.value, pointer);
        return out;
      }
      case 'call':
        return this.call(node, pointer);
      case 'closure':
        return this.fail('a predicate can only be passed to a function such as all()', node);
    }
  }

  private binary(node: Extract<ExpressionNode, { kind: 'binary' }>, pointer: Pointer): unknown {
    const { op } = node;
    if (op === '&&' || op === '||') {
      const left = this.bool(this.run(node.left, pointer), node, op);
      if (op === '&&' ? !left : left) return left;
      return this.bool(this.run(node.right, pointer), node, op);
    }
    const left = this.run(node.left, pointer);
    if (op === '??') return left === null || left === undefined ? this.run(node.right, pointer) : left;
    const right = this.run(node.right, pointer);
    switch (op) {
      case '==':
        return valuesEqual(left, right, () => this.step(node));
      case '!=':
        return !valuesEqual(left, right, () => this.step(node));
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const sameType =
          (typeof left === 'number' && typeof right === 'number') ||
          (typeof left === 'string' && typeof right === 'string');
        if (!sameType)
          this.fail(
            `invalid operation: ${op} (mismatched types ${typeName(left)} and ${typeName(right)})`,
            node,
          );
        const l = left as number | string;
        const r = right as number | string;
        return op === '<' ? l < r : op === '<=' ? l <= r : op === '>' ? l > r : l >= r;
      }
      case 'in':
      case 'not in': {
        const found = this.contains(right, left, node);
        return op === 'in' ? found : !found;
      }
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        if (typeof left !== 'string' || typeof right !== 'string') {
          this.fail(
            `invalid operation: ${op} (mismatched types ${typeName(left)} and ${typeName(right)})`,
            node,
          );
        }
        return op === 'contains'
          ? left.includes(right)
          : op === 'startsWith'
            ? left.startsWith(right)
            : left.endsWith(right);
      }
      case '+': {
        if (typeof left === 'number' && typeof right === 'number') return left + right;
        if (typeof left === 'string' && typeof right === 'string') {
          this.checkSize(left.length + right.length, node);
          return left + right;
        }
        if (Array.isArray(left) && Array.isArray(right)) {
          this.checkSize(left.length + right.length, node);
          return [...left, ...right];
        }
        return this.fail(
          `invalid operation: + (mismatched types ${typeName(left)} and ${typeName(right)})`,
          node,
        );
      }
      default:
        return this.arithmetic(op, left, right, node);
    }
  }

  private arithmetic(
    op: '-' | '*' | '/' | '%' | '**',
    left: unknown,
    right: unknown,
    node: ExpressionNode,
  ): number {
    if (typeof left !== 'number' || typeof right !== 'number') {
      return this.fail(
        `invalid operation: ${op} (mismatched types ${typeName(left)} and ${typeName(right)})`,
        node,
      );
    }
    switch (op) {
      case '-':
        return left - right;
      case '*':
        return left * right;
      case '/':
        return left / right;
      case '%':
        if (!Number.isInteger(left) || !Number.isInteger(right))
          this.fail('invalid operation: % needs integers', node);
        if (right === 0) this.fail('integer divide by zero', node);
        return left % right;
      case '**':
        return left ** right;
    }
  }

  private contains(collection: unknown, item: unknown, node: ExpressionNode): boolean {
    if (Array.isArray(collection))
      return collection.some((element) => valuesEqual(element, item, () => this.step(node)));
    if (isPlainObject(collection)) {
      if (typeof item !== 'string') this.fail(`invalid operation: ${typeName(item)} in map`, node);
      return Object.hasOwn(collection, item);
    }
    return this.fail(`invalid operation: in ${typeName(collection)}`, node);
  }

  private member(node: Extract<ExpressionNode, { kind: 'member' }>, pointer: Pointer): unknown {
    const object = this.run(node.object, pointer);
    const key = this.run(node.property, pointer);
    if (object === null || object === undefined) {
      if (node.optional) return null;
      return this.fail(`cannot fetch ${stringKey(key)} from nil`, node);
    }
    if (Array.isArray(object) || typeof object === 'string') {
      if (typeof key !== 'number' || !Number.isInteger(key)) {
        return this.fail(
          `cannot fetch ${stringKey(key)} from ${typeName(object)} (index must be an int)`,
          node,
        );
      }
      const length = object.length;
      const index = key < 0 ? length + key : key;
      if (index < 0 || index >= length) this.fail(`index out of range: ${key} (length ${length})`, node);
      return Array.isArray(object) ? (object[index] ?? null) : object[index];
    }
    if (isPlainObject(object)) {
      if (typeof key !== 'string') return this.fail(`cannot fetch ${typeName(key)} key from map`, node);
      if (FORBIDDEN_NAMES.has(key)) return this.fail(`"${key}" may not be used`, node);
      const field = ownDataValue(object, key);
      if (field.accessor) return this.fail(`field ${JSON.stringify(key)} is not plain data`, node);
      return field.found ? (field.value ?? null) : null;
    }
    return this.fail(`cannot fetch ${stringKey(key)} from ${typeName(object)}`, node);
  }

  private slice(node: Extract<ExpressionNode, { kind: 'slice' }>, pointer: Pointer): unknown {
    const object = this.run(node.object, pointer);
    if (!Array.isArray(object) && typeof object !== 'string')
      this.fail(`cannot slice ${typeName(object)}`, node);
    const length = (object as unknown[] | string).length;
    const bound = (n: ExpressionNode | undefined, fallback: number): number => {
      if (n === undefined) return fallback;
      const v = this.run(n, pointer);
      if (typeof v !== 'number' || !Number.isInteger(v)) return this.fail('slice bounds must be ints', n);
      const i = v < 0 ? length + v : v;
      return Math.min(Math.max(i, 0), length);
    };
    const from = bound(node.from, 0);
    const to = bound(node.to, length);
    return (object as unknown[] | string).slice(from, Math.max(from, to));
  }

  private call(node: Extract<ExpressionNode, { kind: 'call' }>, pointer: Pointer): unknown {
    const fn = Object.hasOwn(BUILTIN_FUNCTIONS, node.name) ? BUILTIN_FUNCTIONS[node.name] : undefined;
    if (fn === undefined) return this.predicate(node, pointer);
    if (node.args.length < fn.minArgs || node.args.length > fn.maxArgs) {
      const want = fn.minArgs === fn.maxArgs ? String(fn.minArgs) : `${fn.minArgs}+`;
      this.fail(`${node.name} takes ${want} argument(s), got ${node.args.length}`, node);
    }
    const args = node.args.map((a) => this.run(a, pointer));
    return fn.call(args, (reason) => this.fail(reason, node));
  }

  private predicate(node: Extract<ExpressionNode, { kind: 'call' }>, pointer: Pointer): unknown {
    const [collectionNode, closure] = node.args;
    if (collectionNode === undefined || closure?.kind !== 'closure')
      return this.fail(`${node.name} needs a predicate`, node);
    const collection = this.run(collectionNode, pointer);
    if (!Array.isArray(collection))
      return this.fail(`${node.name} expects an array, got ${typeName(collection)}`, node);
    const test = (item: unknown): boolean =>
      this.bool(this.run(closure.body, item), closure, `predicate of ${node.name}`);
    switch (node.name) {
      case 'all':
        return collection.every(test);
      case 'any':
        return collection.some(test);
      case 'none':
        return !collection.some(test);
      case 'one':
        return collection.filter(test).length === 1;
      case 'filter':
        return collection.filter(test);
      case 'map':
        return collection.map((item) => this.run(closure.body, item));
      case 'count':
        return collection.filter(test).length;
      case 'find':
        return collection.find(test) ?? null;
      case 'findIndex':
        return collection.findIndex(test);
      case 'findLast':
        return collection.findLast(test) ?? null;
      case 'findLastIndex':
        return collection.findLastIndex(test);
      default:
        return this.fail(`unknown function "${node.name}"`, node);
    }
  }
}

function stringKey(key: unknown): string {
  return typeof key === 'string' ? JSON.stringify(key) : String(key);
}
