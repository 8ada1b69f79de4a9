// One problem found in an object (field path, position, message), and the collector the checks write to.
import { formatFieldPath, type FieldPath } from './field-path.ts';
import type { SourcePosition } from './manifest.ts';

/** A problem in one field of one object. */
export interface ValidationIssue {
  /** Printed field path, e.g. `spec.strategy.canary.steps[2].setWeight` ("" for the whole object). */
  path: string;
  line: number;
  col: number;
  message: string;
}

/** Collects errors and warnings for one object, placing each at its field's line. */
export class IssueCollector {
  readonly errors: ValidationIssue[] = [];
  readonly warnings: ValidationIssue[] = [];

  constructor(private readonly lineOf: (path: FieldPath) => SourcePosition) {}

  error(path: FieldPath, message: string): void {
    this.errors.push(this.issue(path, message));
  }

  warn(path: FieldPath, message: string): void {
    this.warnings.push(this.issue(path, message));
  }

  private issue(path: FieldPath, message: string): ValidationIssue {
    const { line, col } = this.lineOf(path);
    return { path: formatFieldPath(path), line, col, message };
  }
}
