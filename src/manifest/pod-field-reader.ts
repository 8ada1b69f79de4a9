// Reads the loose parts of a pod template (kept as written by the schema) field by field, reporting a value
// of the wrong type at its path and letting analysis-argument placeholders through unchecked.
import type { FieldPath } from './field-path.ts';
import { describeValue } from './issue-messages.ts';
import type { IssueCollector } from './validation-issue.ts';

// "{{args.image}}": an analysis template's job spec is filled in from the run's arguments before the
// Job is created, so a field holding one is checked only once it has a value (at run time).
const PLACEHOLDER = /\{\{.+\}\}/;

export type LooseRecord = Record<string, unknown>;

/** True for a mapping (not a list, not null). */
export function isRecord(value: unknown): value is LooseRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Typed access to a loose pod template, reporting each problem once to the collector. */
export class PodFieldReader {
  constructor(
    readonly sink: IssueCollector,
    /** True where `{{…}}` placeholders may stand for a value (analysis job specs). */
    readonly templated: boolean,
  ) {}

  error(path: FieldPath, message: string): void {
    this.sink.error(path, message);
  }

  warn(path: FieldPath, message: string): void {
    this.sink.warn(path, message);
  }

  /** True when the value is an argument placeholder that is filled in later (only where templated). */
  isPlaceholder(value: unknown): boolean {
    return this.templated && typeof value === 'string' && PLACEHOLDER.test(value);
  }

  /** The mapping at `path`, undefined when absent (or not a mapping, which is reported). */
  record(value: unknown, path: FieldPath): LooseRecord | undefined {
    if (value === undefined || value === null) return undefined;
    if (isRecord(value)) return value;
    if (!this.isPlaceholder(value)) this.error(path, `must be a mapping, got ${describeValue(value)}`);
    return undefined;
  }

  /** The mapping reached from `record` through `keys` (each a mapping), undefined when one is absent. */
  nested(record: LooseRecord, keys: readonly string[], at: FieldPath): LooseRecord | undefined {
    let current: LooseRecord | undefined = record;
    const path: Array<string | number> = [...at];
    for (const key of keys) {
      path.push(key);
      current = this.record(current[key], path);
      if (current === undefined) return undefined;
    }
    return current;
  }

  /** The list at `path`, undefined when absent (or not a list, which is reported). */
  list(value: unknown, path: FieldPath): unknown[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value;
    if (!this.isPlaceholder(value)) this.error(path, `must be a list, got ${describeValue(value)}`);
    return undefined;
  }

  /** The string at `path`, undefined when absent, a placeholder, or not a string (reported). */
  string(value: unknown, path: FieldPath): string | undefined {
    if (value === undefined || value === null || this.isPlaceholder(value)) return undefined;
    if (typeof value === 'string') return value;
    this.error(path, `must be a string, got ${describeValue(value)}`);
    return undefined;
  }

  /** The integer at `path`, undefined when absent, a placeholder, or not an integer (reported). */
  integer(value: unknown, path: FieldPath): number | undefined {
    if (value === undefined || value === null || this.isPlaceholder(value)) return undefined;
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    this.error(path, `must be an integer, got ${describeValue(value)}`);
    return undefined;
  }

  /** An integer that must be at least `min` (the API server's non-negative and positive fields). */
  integerAtLeast(value: unknown, path: FieldPath, min: number): number | undefined {
    const n = this.integer(value, path);
    if (n !== undefined && n < min) {
      this.error(path, `must be >= ${min}, got ${n}`);
      return undefined;
    }
    return n;
  }

  /** Reports `problem` (from the kube-names rules) for the string at `path`, unless it is a placeholder. */
  name(
    value: unknown,
    path: FieldPath,
    problemOf: (text: string) => string | undefined,
    { required = true }: { required?: boolean } = {},
  ): string | undefined {
    if (value === undefined || value === null || value === '') {
      if (required && !this.isPlaceholder(value)) this.error(path, 'required');
      return undefined;
    }
    const text = this.string(value, path);
    if (text === undefined) return undefined;
    const problem = problemOf(text);
    if (problem !== undefined) {
      this.error(path, `${problem}, got ${describeValue(text)}`);
      return undefined;
    }
    return text;
  }

  /** Reports every key of `fields` that is set, beyond the first: for "exactly one of" unions. */
  oneOf(
    record: LooseRecord,
    fields: readonly string[],
    path: FieldPath,
    what: string,
    { required = true }: { required?: boolean } = {},
  ): string | undefined {
    const set = fields.filter((field) => record[field] !== undefined && record[field] !== null);
    if (set.length === 0 && required) this.error(path, `must set one ${what}: ${fields.join(', ')}`);
    if (set.length > 1) this.error(path, `must set only one ${what}, got ${set.join(' and ')}`);
    return set.length === 1 ? set[0] : undefined;
  }
}
