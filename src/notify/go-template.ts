// The subset of Go's text/template that notifications-engine templates are written in, as a small interpreter over plain data.
import { NotificationConfigError } from './notification-config-error.ts';

/**
 * A compiled template. `render` takes plain JSON-like data (the `.` of the template) and returns the text.
 * @throws NotificationConfigError (`notify.template.execution`) when the data does not fit (a call of
 * `index` out of range, a comparison of different types).
 */
export interface GoTemplate {
  readonly source: string;
  render(data: unknown): string;
}

/**
 * Functions templates may call: Go's text/template built-ins, and the few Sprig functions (which
 * notifications-engine adds) that Argo's catalog and typical templates use — the catalog's step template
 * counts steps with `add`.
 */
export const TEMPLATE_FUNCTIONS = [
  'and',
  'or',
  'not',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'len',
  'index',
  'add',
  'add1',
  'sub',
  'mul',
  'div',
  'mod',
  'upper',
  'lower',
  'trim',
  'quote',
  'default',
  'toJson',
];

/** What Go prints for a missing map key (missingkey=default), so output matches Argo's. */
export const NO_VALUE = '<no value>';

type Operand =
  | { kind: 'field'; base: 'dot' | { variable: string }; path: string[] }
  | { kind: 'literal'; value: unknown }
  | { kind: 'pipeline'; pipeline: Pipeline };
type Command = { kind: 'operand'; operand: Operand } | { kind: 'call'; name: string; args: Operand[] };
interface Pipeline {
  declare?: string[];
  commands: Command[];
}
type Node =
  | { kind: 'text'; text: string }
  | { kind: 'output'; pipeline: Pipeline }
  | { kind: 'if' | 'with'; pipeline: Pipeline; then: Node[]; otherwise: Node[] }
  | { kind: 'range'; pipeline: Pipeline; body: Node[]; otherwise: Node[] };

const UNSUPPORTED_KEYWORDS = new Set(['define', 'template', 'block', 'break', 'continue']);
const MAX_OUTPUT = 1_000_000;

/**
 * Compiles `source`. `key` is the ConfigMap key the text comes from: every error names it.
 * Supported: `{{.a.b}}`, `{{$}}`, `{{$v.a}}`, `{{$x := …}}`, `{{if}}`/`{{else if}}`/`{{else}}`/`{{end}}`,
 * `{{range $i, $v := …}}` (arrays, and maps in key order), `{{with}}`, `{{- -}}` trimming, comments,
 * string/number/bool/nil literals, `|` pipelines, parentheses and {@link TEMPLATE_FUNCTIONS}.
 * @throws NotificationConfigError `notify.template.syntax` or `notify.template.unsupported`.
 */
export function compileGoTemplate(source: string, key: string): GoTemplate {
  const nodes = new TemplateParser(source, key).parse();
  return {
    source,
    render: (data) => {
      const out: string[] = [];
      new TemplateRun(key, data, out).nodes(nodes, data, [new Map([['$', data]])]);
      return out.join('');
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Parsing

type Piece = { kind: 'text'; text: string } | { kind: 'action'; body: string; at: number };

class TemplateParser {
  private pieces: Piece[] = [];
  private index = 0;

  constructor(
    private readonly source: string,
    private readonly key: string,
  ) {}

  private fail(reason: string, at: number, code: 'syntax' | 'unsupported' = 'syntax'): never {
    const line = this.source.slice(0, at).split('\n').length;
    throw new NotificationConfigError(`notify.template.${code}`, this.key, `line ${line}: ${reason}`);
  }

  parse(): Node[] {
    this.split();
    const { nodes, end } = this.list();
    if (end !== undefined) this.fail(`unexpected {{${end.word}}}`, end.at);
    return nodes;
  }

  /** Cuts the text into text and `{{…}}` pieces, applying the `{{-` and `-}}` trims. */
  private split(): void {
    let at = 0;
    let trimNext = false;
    while (at < this.source.length) {
      const open = this.source.indexOf('{{', at);
      let text = this.source.slice(at, open === -1 ? undefined : open);
      if (trimNext) text = text.replace(/^\s+/, '');
      trimNext = false;
      if (open === -1) {
        this.pieces.push({ kind: 'text', text });
        break;
      }
      let bodyStart = open + 2;
      if (/^-\s/.test(this.source.slice(bodyStart, bodyStart + 2))) {
        text = text.replace(/\s+$/, '');
        bodyStart += 1;
      }
      this.pieces.push({ kind: 'text', text });
      const close = this.closeOf(bodyStart);
      if (close === -1) this.fail('unclosed action: {{ without }}', open);
      let body = this.source.slice(bodyStart, close);
      if (/\s-$/.test(body)) {
        body = body.slice(0, -1);
        trimNext = true;
      }
      this.pieces.push({ kind: 'action', body: body.trim(), at: open });
      at = close + 2;
    }
  }

  /** The `}}` closing an action, skipping those inside string literals. */
  private closeOf(from: number): number {
    let quote: string | undefined;
    for (let i = from; i < this.source.length; i++) {
      const c = this.source[i]!;
      if (quote !== undefined) {
        if (c === '\\' && quote === '"') i++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === '`') quote = c;
      else if (c === '}' && this.source[i + 1] === '}') return i;
    }
    return -1;
  }

  /** Nodes up to an `{{else…}}` or `{{end}}` (returned as `end`), or the end of the text. */
  private list(): { nodes: Node[]; end?: { word: string; rest: string; at: number } } {
    const nodes: Node[] = [];
    while (this.index < this.pieces.length) {
      const piece = this.pieces[this.index++]!;
      if (piece.kind === 'text') {
        if (piece.text !== '') nodes.push({ kind: 'text', text: piece.text });
        continue;
      }
      const { body, at } = piece;
      if (body.startsWith('/*')) {
        if (!body.endsWith('*/')) this.fail('unclosed comment', at);
        continue;
      }
      const word = /^[A-Za-z]+/.exec(body)?.[0] ?? '';
      const rest = body.slice(word.length).trim();
      if (word === 'end' || word === 'else') return { nodes, end: { word, rest, at } };
      if (word === 'if' || word === 'with') nodes.push(this.branch(word, rest, at));
      else if (word === 'range') nodes.push(this.range(rest, at));
      else if (UNSUPPORTED_KEYWORDS.has(word))
        this.fail(`{{${word}}} is not supported (see docs/notifications.md)`, at, 'unsupported');
      else nodes.push({ kind: 'output', pipeline: this.pipeline(body, at) });
    }
    return { nodes };
  }

  private branch(word: 'if' | 'with', condition: string, at: number): Node {
    if (condition === '') this.fail(`{{${word}}} needs a value`, at);
    const pipeline = this.pipeline(condition, at);
    const { nodes: then, end } = this.list();
    if (end === undefined) this.fail(`{{${word}}} without {{end}}`, at);
    let otherwise: Node[] = [];
    if (end.word === 'else') {
      if (end.rest.startsWith('if ') || end.rest.startsWith('with ')) {
        // `{{else if x}}` is an `if` nested in the else branch that shares the outer `{{end}}`.
        const inner = end.rest.startsWith('if ') ? 'if' : 'with';
        otherwise = [this.branch(inner, end.rest.slice(inner.length).trim(), end.at)];
        return { kind: word, pipeline, then, otherwise };
      }
      if (end.rest !== '') this.fail(`unexpected "${end.rest}" after else`, end.at);
      const tail = this.list();
      if (tail.end?.word !== 'end') this.fail(`{{${word}}} without {{end}}`, at);
      otherwise = tail.nodes;
    } else if (end.rest !== '') this.fail(`unexpected "${end.rest}" after end`, end.at);
    return { kind: word, pipeline, then, otherwise };
  }

  private range(header: string, at: number): Node {
    if (header === '') this.fail('{{range}} needs a value', at);
    const pipeline = this.pipeline(header, at);
    const { nodes: body, end } = this.list();
    if (end === undefined) this.fail('{{range}} without {{end}}', at);
    let otherwise: Node[] = [];
    if (end.word === 'else') {
      const tail = this.list();
      if (tail.end?.word !== 'end') this.fail('{{range}} without {{end}}', at);
      otherwise = tail.nodes;
    }
    return { kind: 'range', pipeline, body, otherwise };
  }

  private pipeline(text: string, at: number): Pipeline {
    const tokens = tokenizeAction(text, (reason) => this.fail(reason, at));
    const reader = new TokenReader(tokens, (reason, code) => this.fail(reason, at, code));
    const pipeline = reader.pipeline(true);
    if (!reader.done()) this.fail(`unexpected ${reader.peek()?.text ?? 'end'}`, at);
    return pipeline;
  }
}

type Token =
  | { kind: 'field'; text: string; path: string[] }
  | { kind: 'variable'; text: string; name: string; path: string[] }
  | { kind: 'word'; text: string }
  | { kind: 'string' | 'number'; text: string; value: string | number }
  | { kind: 'punct'; text: '(' | ')' | '|' | ',' | ':=' | '=' };

function tokenizeAction(text: string, fail: (reason: string) => never): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const chain = (from: number): { path: string[]; end: number } => {
    const match = /^(\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(text.slice(from))![0];
    return { path: match === '' ? [] : match.slice(1).split('.'), end: from + match.length };
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '.') {
      const { path, end } = chain(i);
      if (path.length === 0) {
        if (/[A-Za-z_]/.test(text[i + 1] ?? '')) fail(`bad field at "${text.slice(i)}"`);
        tokens.push({ kind: 'field', text: '.', path: [] });
        i += 1;
      } else {
        tokens.push({ kind: 'field', text: text.slice(i, end), path });
        i = end;
      }
    } else if (c === '$') {
      const name = '$' + (/^[A-Za-z0-9_]*/.exec(text.slice(i + 1))?.[0] ?? '');
      const { path, end } = chain(i + name.length);
      tokens.push({ kind: 'variable', text: text.slice(i, end), name, path });
      i = end;
    } else if (c === '"' || c === '`') {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c) {
        if (c === '"' && text[j] === '\\') {
          const escaped = text[j + 1];
          value += escaped === 'n' ? '\n' : escaped === 't' ? '\t' : (escaped ?? '');
          j += 2;
        } else value += text[j++];
      }
      if (j >= text.length) fail('unterminated string');
      tokens.push({ kind: 'string', text: text.slice(i, j + 1), value });
      i = j + 1;
    } else if (/[-0-9]/.test(c)) {
      const match = /^-?[0-9]+(\.[0-9]+)?/.exec(text.slice(i));
      if (!match) fail(`unexpected "${c}"`);
      tokens.push({ kind: 'number', text: match[0], value: Number(match[0]) });
      i += match[0].length;
    } else if (text.startsWith(':=', i)) {
      tokens.push({ kind: 'punct', text: ':=' });
      i += 2;
    } else if ('()|,='.includes(c)) {
      tokens.push({ kind: 'punct', text: c as '(' | ')' | '|' | ',' | '=' });
      i += 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))![0];
      tokens.push({ kind: 'word', text: word });
      i += word.length;
    } else fail(`unexpected "${c}"`);
  }
  return tokens;
}

class TokenReader {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly fail: (reason: string, code?: 'syntax' | 'unsupported') => never,
  ) {}

  peek(): Token | undefined {
    return this.tokens[this.at];
  }
  done(): boolean {
    return this.at >= this.tokens.length;
  }
  private isPunct(text: string): boolean {
    const t = this.peek();
    return t?.kind === 'punct' && t.text === text;
  }

  /** `[$a[, $b] :=] command [| command]…`; declarations only where Go allows them (top level). */
  pipeline(top: boolean): Pipeline {
    let declare: string[] | undefined;
    if (top) declare = this.declarations();
    const commands: Command[] = [this.command()];
    while (this.isPunct('|')) {
      this.at++;
      const next = this.command();
      if (next.kind !== 'call') this.fail('only a function can follow | in a pipeline');
      commands.push(next);
    }
    return declare ? { declare, commands } : { commands };
  }

  private declarations(): string[] | undefined {
    const names: string[] = [];
    let j = this.at;
    while (true) {
      const t = this.tokens[j];
      if (t?.kind !== 'variable' || t.path.length > 0 || t.name === '$') return undefined;
      names.push(t.name);
      const sep = this.tokens[j + 1];
      if (sep?.kind === 'punct' && sep.text === ',' && names.length < 2) j += 2;
      else if (sep?.kind === 'punct' && sep.text === ':=') {
        this.at = j + 2;
        return names;
      } else if (sep?.kind === 'punct' && sep.text === '=')
        this.fail('assigning to a variable with = is not supported', 'unsupported');
      else return undefined;
    }
  }

  private command(): Command {
    const first = this.peek();
    if (first === undefined) this.fail('missing value');
    if (first.kind === 'word' && !['true', 'false', 'nil'].includes(first.text)) {
      this.at++;
      if (!TEMPLATE_FUNCTIONS.includes(first.text))
        this.fail(
          `function "${first.text}" is not supported (supported: ${TEMPLATE_FUNCTIONS.join(', ')})`,
          'unsupported',
        );
      const args: Operand[] = [];
      while (!this.done() && !this.isPunct('|') && !this.isPunct(')')) args.push(this.operand());
      return { kind: 'call', name: first.text, args };
    }
    const operand = this.operand();
    if (!this.done() && !this.isPunct('|') && !this.isPunct(')'))
      this.fail(`can't give an argument to a non-function ${first.text}`);
    return { kind: 'operand', operand };
  }

  private operand(): Operand {
    const t = this.peek();
    if (t === undefined) this.fail('missing value');
    this.at++;
    switch (t.kind) {
      case 'field':
        return { kind: 'field', base: 'dot', path: t.path };
      case 'variable':
        return { kind: 'field', base: { variable: t.name }, path: t.path };
      case 'string':
      case 'number':
        return { kind: 'literal', value: t.value };
      case 'word':
        if (t.text === 'true' || t.text === 'false') return { kind: 'literal', value: t.text === 'true' };
        if (t.text === 'nil') return { kind: 'literal', value: undefined };
        return this.fail(`a function (${t.text}) used as a value must be in parentheses`);
      case 'punct': {
        if (t.text !== '(') this.fail(`unexpected ${t.text}`);
        const pipeline = this.pipeline(false);
        if (!this.isPunct(')')) this.fail('unclosed (');
        this.at++;
        return { kind: 'pipeline', pipeline };
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Running

type Scope = Array<Map<string, unknown>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Go's truth: false, 0, nil, and empty strings, arrays and maps are false. */
export function isTrue(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

/** How a value prints: strings as they are, missing as Go's `<no value>`, maps and arrays as JSON. */
function printed(value: unknown): string {
  if (value === undefined || value === null) return NO_VALUE;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A value as text for string functions: missing is empty (Sprig's), the rest as printed. */
function printedOrEmpty(value: unknown): string {
  return value === undefined || value === null ? '' : printed(value);
}

class TemplateRun {
  private size = 0;
  constructor(
    private readonly key: string,
    private readonly root: unknown,
    private readonly out: string[],
  ) {}

  private fail(reason: string): never {
    throw new NotificationConfigError('notify.template.execution', this.key, reason);
  }

  private write(text: string): void {
    this.size += text.length;
    if (this.size > MAX_OUTPUT) this.fail(`output over ${MAX_OUTPUT} characters`);
    this.out.push(text);
  }

  nodes(nodes: Node[], dot: unknown, scope: Scope): void {
    for (const node of nodes) this.node(node, dot, scope);
  }

  private node(node: Node, dot: unknown, scope: Scope): void {
    switch (node.kind) {
      case 'text':
        this.write(node.text);
        return;
      case 'output': {
        const value = this.pipeline(node.pipeline, dot, scope);
        if (node.pipeline.declare) scope[scope.length - 1]!.set(node.pipeline.declare[0]!, value);
        else this.write(printed(value));
        return;
      }
      case 'if':
      case 'with': {
        const inner: Scope = [...scope, new Map()];
        const value = this.pipeline(node.pipeline, dot, inner);
        if (node.pipeline.declare) inner[inner.length - 1]!.set(node.pipeline.declare[0]!, value);
        if (isTrue(value)) this.nodes(node.then, node.kind === 'with' ? value : dot, inner);
        else this.nodes(node.otherwise, dot, scope);
        return;
      }
      case 'range': {
        const value = this.pipeline(node.pipeline, dot, scope);
        const entries: Array<[unknown, unknown]> = Array.isArray(value)
          ? value.map((v, i) => [i, v])
          : isRecord(value)
            ? Object.keys(value)
                .sort()
                .map((k) => [k, value[k]])
            : value === undefined || value === null
              ? []
              : this.fail(`range can't iterate over ${printed(value)}`);
        if (entries.length === 0) this.nodes(node.otherwise, dot, scope);
        const names = node.pipeline.declare ?? [];
        for (const [k, v] of entries) {
          const vars = new Map<string, unknown>();
          if (names.length === 1) vars.set(names[0]!, v);
          if (names.length === 2) vars.set(names[0]!, k).set(names[1]!, v);
          this.nodes(node.body, v, [...scope, vars]);
        }
        return;
      }
    }
  }

  private pipeline(pipeline: Pipeline, dot: unknown, scope: Scope): unknown {
    let value: unknown;
    pipeline.commands.forEach((command, i) => {
      if (command.kind === 'operand') value = this.operand(command.operand, dot, scope);
      else {
        const args = command.args.map((a) => () => this.operand(a, dot, scope));
        if (i > 0) {
          const piped = value;
          args.push(() => piped);
        }
        value = this.call(command.name, args);
      }
    });
    return value;
  }

  private operand(operand: Operand, dot: unknown, scope: Scope): unknown {
    if (operand.kind === 'literal') return operand.value;
    if (operand.kind === 'pipeline') return this.pipeline(operand.pipeline, dot, scope);
    let value: unknown = dot;
    if (operand.base !== 'dot') {
      const name = operand.base.variable;
      const holder = [...scope].reverse().find((vars) => vars.has(name));
      if (holder === undefined) this.fail(`undefined variable ${name}`);
      value = name === '$' ? this.root : holder.get(name);
    }
    for (const segment of operand.path) {
      // A missing key gives nil (printed `<no value>`), and so does anything read through it.
      value = isRecord(value) && Object.hasOwn(value, segment) ? value[segment] : undefined;
    }
    return value;
  }

  /** Arguments are thunks so `and`/`or` stop at the first decisive one, as Go's do. */
  private call(name: string, args: Array<() => unknown>): unknown {
    const want = (n: number): void => {
      if (args.length < n) this.fail(`${name} needs ${n} argument${n === 1 ? '' : 's'}`);
    };
    switch (name) {
      case 'and': {
        want(1);
        let last: unknown;
        for (const arg of args) if (!isTrue((last = arg()))) return last;
        return last;
      }
      case 'or': {
        want(1);
        let last: unknown;
        for (const arg of args) if (isTrue((last = arg()))) return last;
        return last;
      }
      case 'not':
        want(1);
        return !isTrue(args[0]!());
      case 'eq': {
        want(2);
        const first = args[0]!();
        return args.slice(1).some((arg) => this.compare(first, arg(), name) === 0);
      }
      case 'ne':
        want(2);
        return this.compare(args[0]!(), args[1]!(), name) !== 0;
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge': {
        want(2);
        const c = this.compare(args[0]!(), args[1]!(), name, true);
        return name === 'lt' ? c < 0 : name === 'le' ? c <= 0 : name === 'gt' ? c > 0 : c >= 0;
      }
      case 'len': {
        want(1);
        const value = args[0]!();
        if (typeof value === 'string' || Array.isArray(value)) return value.length;
        if (isRecord(value)) return Object.keys(value).length;
        return this.fail(`len of ${printed(value)}`);
      }
      case 'index': {
        want(1);
        let value = args[0]!();
        for (const arg of args.slice(1)) {
          const at = arg();
          if (Array.isArray(value)) {
            if (typeof at !== 'number' || at < 0 || at >= value.length)
              this.fail(`index out of range: ${printed(at)}`);
            value = value[at];
          } else if (isRecord(value) && typeof at === 'string') {
            value = Object.hasOwn(value, at) ? value[at] : undefined;
          } else if (value === undefined || value === null) {
            value = undefined;
          } else this.fail(`can't index ${printed(value)} with ${printed(at)}`);
        }
        return value;
      }
      case 'add':
      case 'mul': {
        want(1);
        const numbers = args.map((arg) => this.integer(arg(), name));
        return name === 'add' ? numbers.reduce((a, b) => a + b, 0) : numbers.reduce((a, b) => a * b, 1);
      }
      case 'add1':
        want(1);
        return this.integer(args[0]!(), name) + 1;
      case 'sub':
      case 'div':
      case 'mod': {
        want(2);
        const a = this.integer(args[0]!(), name);
        const b = this.integer(args[1]!(), name);
        if (name === 'sub') return a - b;
        if (b === 0) this.fail(`${name}: division by zero`);
        return name === 'div' ? Math.trunc(a / b) : a % b;
      }
      case 'upper':
      case 'lower':
      case 'trim': {
        want(1);
        const text = printedOrEmpty(args[0]!());
        return name === 'upper' ? text.toUpperCase() : name === 'lower' ? text.toLowerCase() : text.trim();
      }
      case 'quote':
        return args.map((arg) => JSON.stringify(printedOrEmpty(arg()))).join(' ');
      case 'default': {
        // Sprig: `default fallback value`, usually piped: `.value | default "x"`.
        want(1);
        const value = args.length > 1 ? args[args.length - 1]!() : undefined;
        return isTrue(value) ? value : args[0]!();
      }
      case 'toJson':
        want(1);
        return JSON.stringify(args[0]!() ?? null);
    }
    return this.fail(`function "${name}" is not supported`);
  }

  /** Sprig's integer arithmetic: numbers and numeric strings, truncated; missing is 0. */
  private integer(value: unknown, name: string): number {
    if (value === undefined || value === null) return 0;
    const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number))
      this.fail(`${name}: ${printed(value)} is not a number`);
    return Math.trunc(number);
  }

  /** -1, 0 or 1; values of different kinds are an error, as in Go (missing equals only missing). */
  private compare(a: unknown, b: unknown, name: string, ordered = false): number {
    const missing = (v: unknown): boolean => v === undefined || v === null;
    if (!ordered && (missing(a) || missing(b))) return missing(a) && missing(b) ? 0 : 1;
    if (typeof a !== typeof b || (typeof a !== 'string' && typeof a !== 'number' && typeof a !== 'boolean'))
      this.fail(`${name}: incompatible types for comparison (${printed(a)}, ${printed(b)})`);
    if (ordered && typeof a === 'boolean') this.fail(`${name}: invalid type for comparison`);
    return a === b ? 0 : (a as string | number) < (b as string | number) ? -1 : 1;
  }
}
