// The tokenizer for analysis conditions: turns expr-lang style source text into positioned tokens.
import { ExpressionSyntaxError } from './expression-syntax-error.ts';

/** One lexical token; `pos` is the 0-based offset of its first character in the source. */
export type Token =
  | { kind: 'number'; value: number; pos: number }
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'name'; value: string; pos: number }
  | { kind: 'op'; value: string; pos: number }
  | { kind: 'eof'; value: ''; pos: number };

// Longest first, so "**" wins over "*" and "?." over "?".
const OPERATORS = [
  '===',
  '!==',
  '**',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '??',
  '?.',
  '+',
  '-',
  '*',
  '/',
  '%',
  '^',
  '<',
  '>',
  '!',
  '?',
  ':',
  '.',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '#',
];

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '`': '`',
};

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z_$]/.test(c);
const isNamePart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/** Splits `source` into tokens, ending with one `eof` token. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (reason: string, at: number): never => {
    throw new ExpressionSyntaxError(reason, source, at + 1);
  };
  while (i < source.length) {
    const c = source[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1]))) {
      i = readNumber(source, i, tokens, fail);
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let value = '';
      i++;
      for (;;) {
        const d = source[i];
        if (d === undefined) return fail('unterminated string', start);
        if (d === c) break;
        if (d === '\\' && c !== '`') {
          const e = source[i + 1];
          if (e === 'u') {
            const hex = source.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail('bad \\u escape', i);
            value += String.fromCharCode(parseInt(hex, 16));
            i += 6;
            continue;
          }
          const mapped = e !== undefined && Object.hasOwn(ESCAPES, e) ? ESCAPES[e] : undefined;
          if (mapped === undefined) return fail(`unknown escape \\${e ?? ''}`, i);
          value += mapped;
          i += 2;
          continue;
        }
        value += d;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', value, pos: start });
      continue;
    }
    if (isNameStart(c)) {
      while (isNamePart(source[i])) i++;
      tokens.push({ kind: 'name', value: source.slice(start, i), pos: start });
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i));
    if (op === undefined) return fail(`unexpected character ${JSON.stringify(c)}`, i);
    if (op === '===' || op === '!==') return fail(`unknown operator ${op} (use ${op.slice(0, 2)})`, i);
    tokens.push({ kind: 'op', value: op, pos: start });
    i += op.length;
  }
  tokens.push({ kind: 'eof', value: '', pos: source.length });
  return tokens;
}

function readNumber(
  source: string,
  start: number,
  tokens: Token[],
  fail: (reason: string, at: number) => never,
): number {
  let i = start;
  if (source[i] === '0' && (source[i + 1] === 'x' || source[i + 1] === 'X')) {
    i += 2;
    while (/[0-9a-fA-F_]/.test(source[i] ?? '')) i++;
    const digits = source.slice(start + 2, i).replaceAll('_', '');
    if (digits === '') fail('bad hexadecimal number', start);
    tokens.push({ kind: 'number', value: parseInt(digits, 16), pos: start });
    return i;
  }
  while (isDigit(source[i]) || source[i] === '_') i++;
  // A '.' followed by a digit is a fraction; "1..2" or "x.y" are not.
  if (source[i] === '.' && isDigit(source[i + 1])) {
    i++;
    while (isDigit(source[i]) || source[i] === '_') i++;
  }
  if (source[i] === 'e' || source[i] === 'E') {
    let j = i + 1;
    if (source[j] === '+' || source[j] === '-') j++;
    if (!isDigit(source[j])) fail('bad exponent in number', i);
    while (isDigit(source[j])) j++;
    i = j;
  }
  if (isNamePart(source[i])) fail(`bad number ${JSON.stringify(source.slice(start, i + 1))}`, start);
  const text = source.slice(start, i).replaceAll('_', '');
  tokens.push({ kind: 'number', value: Number(text), pos: start });
  return i;
}
