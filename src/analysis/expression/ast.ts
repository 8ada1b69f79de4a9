// The syntax tree of an analysis condition: plain data produced by the parser, read by the evaluator.

/** A node of a parsed expression; `pos` is the 0-based offset it starts at, for error columns. */
export type ExpressionNode =
  | { kind: 'literal'; value: null | boolean | number | string; pos: number }
  | { kind: 'variable'; name: string; pos: number }
  /** `#`: the element a predicate is looking at. */
  | { kind: 'pointer'; pos: number }
  | { kind: 'unary'; op: '!' | '-' | '+'; operand: ExpressionNode; pos: number }
  | { kind: 'binary'; op: BinaryOperator; left: ExpressionNode; right: ExpressionNode; pos: number }
  | {
      kind: 'conditional';
      test: ExpressionNode;
      then: ExpressionNode;
      otherwise: ExpressionNode;
      pos: number;
    }
  | { kind: 'member'; object: ExpressionNode; property: ExpressionNode; optional: boolean; pos: number }
  | { kind: 'slice'; object: ExpressionNode; from?: ExpressionNode; to?: ExpressionNode; pos: number }
  | { kind: 'call'; name: string; args: ExpressionNode[]; pos: number }
  | { kind: 'array'; elements: ExpressionNode[]; pos: number }
  | { kind: 'map'; entries: Array<{ key: string; value: ExpressionNode }>; pos: number }
  /** A predicate body, evaluated once per element with `#` bound to it. */
  | { kind: 'closure'; body: ExpressionNode; pos: number };

/** Every binary operator after normalising word forms (`and` → `&&`, `or` → `||`). */
export type BinaryOperator =
  | '||'
  | '&&'
  | '??'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'in'
  | 'not in'
  | 'contains'
  | 'startsWith'
  | 'endsWith'
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '**';
