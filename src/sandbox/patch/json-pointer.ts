// JSON pointers (RFC 6901): parsing with ~0/~1 unescaping, and formatting field paths back.

/** Splits a JSON pointer into unescaped reference tokens; undefined when it is not a pointer. */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Joins reference tokens into a JSON pointer, escaping `~` and `/`. */
export function formatJsonPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
