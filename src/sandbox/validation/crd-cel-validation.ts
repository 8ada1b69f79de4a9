// x-kubernetes-validations (CEL) rules of a custom resource's schema, for the rules the sandbox's subset covers.
import type { StatusCause } from '../api/api-status-error.ts';
import { isPlainObject } from '../controllers/kube-object.ts';
import { CelUnsupportedError } from './cel-subset.ts';
import { fieldSchema, type SchemaNode } from './crd-schema.ts';

function typeName(value: unknown, node: SchemaNode): string {
  if (node.type) return node.type;
  if (Array.isArray(value)) return 'array';
  if (isPlainObject(value)) return 'object';
  return typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
}

function check(value: unknown, node: SchemaNode | undefined, path: string, causes: StatusCause[]): void {
  if (node === undefined || value === undefined || value === null) return;
  for (const rule of node.rules ?? []) {
    if (!rule.program) continue;
    let held: boolean;
    try {
      held = rule.program(value);
    } catch (err) {
      // Outside the subset (or an evaluation error a real server would report differently): not judged.
      if (err instanceof CelUnsupportedError) continue;
      throw err;
    }
    if (!held) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${typeName(value, node)}": ${rule.message === '' ? `failed rule: ${rule.rule}` : rule.message}`,
        field: path === '' ? '<nil>' : path,
      });
    }
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => check(item, node.items, `${path}[${i}]`, causes));
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      check(value[key], fieldSchema(node, key), path === '' ? key : `${path}.${key}`, causes);
    }
  }
}

/**
 * Evaluates the `x-kubernetes-validations` rules within the sandbox's CEL subset over a pruned, defaulted
 * and schema-valid object, answering causes as kube-apiserver does
 * (`spec.rules[0].backendRefs[0]: Invalid value: "object": Must have port for Service reference`).
 * Rules outside the subset are skipped, never failed.
 */
export function validateCelRules(value: unknown, node: SchemaNode, path = ''): StatusCause[] {
  const causes: StatusCause[] = [];
  check(value, node, path, causes);
  return causes;
}
