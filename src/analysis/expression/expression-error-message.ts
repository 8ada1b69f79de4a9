// How every expression error says where it happened: the reason, then the column in the expression.

/** `reason (column N of "expression")`; the expression is cut to 200 characters, since inputs can be huge. */
export function expressionErrorMessage(reason: string, expression: string, column: number): string {
  return `${reason} (column ${column} of ${JSON.stringify(expression.slice(0, 200))})`;
}
