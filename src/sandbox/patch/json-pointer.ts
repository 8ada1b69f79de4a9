// JSON pointers (RFC 6901): parsing with ~0/~1 unescaping.

/** Splits a JSON pointer into unescaped reference tokens; undefined when it is not a pointer. */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}
