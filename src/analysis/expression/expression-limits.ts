// The fixed safety bounds every analysis expression is compiled and evaluated under.

/** Bounds that keep a hostile or runaway condition from stalling or exhausting the controller. */
export const EXPRESSION_LIMITS = {
  /** Longest accepted source text, in characters. */
  maxLength: 4096,
  /** Deepest accepted syntax tree (nesting of parentheses, operators, calls). */
  maxDepth: 64,
  /** Most evaluation steps (one per node visited, closure bodies once per element). */
  maxSteps: 100_000,
  /** Largest string or collection an expression may build. */
  maxSize: 1_000_000,
} as const;
