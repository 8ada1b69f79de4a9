// Field paths inside an object (["spec", "steps", 2, "setWeight"]) and their printed form.

/** A path to a field: object keys as strings, array indexes as numbers. */
export type FieldPath = ReadonlyArray<string | number>;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/**
 * Prints a path the way users write it: `spec.strategy.canary.steps[2].setWeight`; keys that are not
 * plain identifiers are quoted (`metadata.labels["app.kubernetes.io/name"]`).
 */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
