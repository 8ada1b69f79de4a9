// Schema checks for built-in kinds, answered as 422 Invalid with causes like kube-apiserver's validation.
import type { StatusCause } from '../api/api-status-error.ts';
import { invalid } from '../api/api-status-error.ts';
import type { ResourceType } from '../resources/resource-type.ts';
import { typeKeyOf, type StoredObject } from '../store/object-store.ts';
import { selectorFromObject } from '../selectors/label-selector.ts';
import { isPlainObject } from '../controllers/kube-object.ts';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Kinds whose names must be DNS-1123 labels (63 chars, no dots) rather than subdomains. */
const LABEL_NAMED = new Set(['/Namespace', '/Service']);

function goMap(m: Record<string, unknown>): string {
  return `map[string]string{${Object.entries(m)
    .map(([k, v]) => `"${k}":"${String(v)}"`)
    .join(', ')}}`;
}

function checkMeta(type: ResourceType, obj: StoredObject, causes: StatusCause[]): void {
  const name = obj.metadata.name ?? '';
  if (name !== '') {
    const label = LABEL_NAMED.has(typeKeyOf(type));
    const ok = label
      ? DNS1123_LABEL.test(name) && name.length <= 63
      : DNS1123_SUBDOMAIN.test(name) && name.length <= 253;
    if (!ok) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: label
          ? `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
          : `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        field: 'metadata.name',
      });
    }
  }
  for (const [key, value] of Object.entries(obj.metadata.labels ?? {})) {
    const bare = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
    if (!LABEL_NAME.test(bare) || bare.length > 63) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        field: 'metadata.labels',
      });
    }
    if (typeof value !== 'string' || !LABEL_VALUE.test(value) || value.length > 63) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "${String(value)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        field: 'metadata.labels',
      });
    }
  }
}

function checkPodSpec(spec: unknown, path: string, causes: StatusCause[]): void {
  if (!isPlainObject(spec)) {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${path}.containers` });
    return;
  }
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `${path}.containers` });
    return;
  }
  containers.forEach((c: unknown, i) => {
    const container = isPlainObject(c) ? c : {};
    const name = container.name;
    if (typeof name !== 'string' || name === '') {
      causes.push({
        reason: 'FieldValueRequired',
        message: 'Required value',
        field: `${path}.containers[${i}].name`,
      });
    }
    if (typeof container.image !== 'string' || container.image === '') {
      causes.push({
        reason: 'FieldValueRequired',
        message: 'Required value',
        field: `${path}.containers[${i}].image`,
      });
    }
  });
}

function checkWorkload(obj: StoredObject, causes: StatusCause[], requireReplicas: boolean): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const replicas = spec.replicas;
  if (
    requireReplicas &&
    replicas !== undefined &&
    (typeof replicas !== 'number' || replicas < 0 || !Number.isInteger(replicas))
  ) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
      field: 'spec.replicas',
    });
  }
  const selector = spec.selector;
  const template = isPlainObject(spec.template) ? spec.template : {};
  const templateMeta = isPlainObject(template.metadata) ? template.metadata : {};
  const templateLabels = isPlainObject(templateMeta.labels)
    ? (templateMeta.labels as Record<string, string>)
    : {};
  if (
    !isPlainObject(selector) ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && !Array.isArray(selector.matchExpressions))
  ) {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' });
  } else if (!selectorFromObject(selector).matches(templateLabels)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${goMap(templateLabels)}: \`selector\` does not match template \`labels\``,
      field: 'spec.template.metadata.labels',
    });
  }
  checkPodSpec(template.spec, 'spec.template.spec', causes);
}

const PERCENT = /^[0-9]+%$/;

/** ValidatePositiveIntOrPercent plus the PDB's 100% cap, for minAvailable and maxUnavailable. */
function checkIntOrPercent(value: unknown, field: string, causes: StatusCause[]): void {
  if (value === undefined || value === null) return;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${value}: must be greater than or equal to 0`,
        field,
      });
    }
    return;
  }
  if (typeof value !== 'string' || !PERCENT.test(value)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${String(value)}": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
      field,
    });
    return;
  }
  if (Number(value.slice(0, -1)) > 100) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${value}": must not be greater than 100%`,
      field,
    });
  }
}

/** policy/v1 PodDisruptionBudget: one of minAvailable/maxUnavailable, each an int ≥ 0 or a percentage ≤ 100%. */
function checkDisruptionBudget(obj: StoredObject, causes: StatusCause[]): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  const { minAvailable, maxUnavailable, unhealthyPodEvictionPolicy } = spec;
  const has = (v: unknown): boolean => v !== undefined && v !== null;
  if (has(minAvailable) && has(maxUnavailable)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "minAvailable: ${String(minAvailable)}, maxUnavailable: ${String(maxUnavailable)}": minAvailable and maxUnavailable cannot be both set`,
      field: 'spec',
    });
  }
  checkIntOrPercent(minAvailable, 'spec.minAvailable', causes);
  checkIntOrPercent(maxUnavailable, 'spec.maxUnavailable', causes);
  if (
    has(unhealthyPodEvictionPolicy) &&
    unhealthyPodEvictionPolicy !== 'IfHealthyBudget' &&
    unhealthyPodEvictionPolicy !== 'AlwaysAllow'
  ) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: "${String(unhealthyPodEvictionPolicy)}": supported values: "AlwaysAllow", "IfHealthyBudget"`,
      field: 'spec.unhealthyPodEvictionPolicy',
    });
  }
}

/** Throws 422 Invalid when a built-in object breaks the rules the real API server enforces (a useful subset). */
export function validateObject(type: ResourceType, obj: StoredObject): void {
  const causes: StatusCause[] = [];
  checkMeta(type, obj, causes);
  switch (typeKeyOf(type)) {
    case '/Pod':
      checkPodSpec(obj.spec, 'spec', causes);
      break;
    case 'apps/ReplicaSet':
    case 'apps/Deployment':
      checkWorkload(obj, causes, true);
      break;
    case 'policy/PodDisruptionBudget':
      checkDisruptionBudget(obj, causes);
      break;
    case 'batch/Job': {
      const spec = isPlainObject(obj.spec) ? obj.spec : {};
      const template = isPlainObject(spec.template) ? spec.template : {};
      const podSpec = isPlainObject(template.spec) ? template.spec : {};
      checkPodSpec(template.spec, 'spec.template.spec', causes);
      const policy = podSpec.restartPolicy;
      if (policy !== 'Never' && policy !== 'OnFailure') {
        causes.push({
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${String(policy ?? 'Always')}": supported values: "OnFailure", "Never"`,
          field: 'spec.template.spec.restartPolicy',
        });
      }
      break;
    }
    case '/Service': {
      const spec = isPlainObject(obj.spec) ? obj.spec : {};
      const ports = Array.isArray(spec.ports) ? spec.ports : [];
      ports.forEach((p: unknown, i) => {
        const port = isPlainObject(p) ? p.port : undefined;
        if (typeof port !== 'number' || port < 1 || port > 65535) {
          causes.push({
            reason: port === undefined ? 'FieldValueRequired' : 'FieldValueInvalid',
            message:
              port === undefined
                ? 'Required value'
                : `Invalid value: ${String(port)}: must be between 1 and 65535, inclusive`,
            field: `spec.ports[${i}].port`,
          });
        }
      });
      break;
    }
    case 'apiextensions.k8s.io/CustomResourceDefinition': {
      const spec = isPlainObject(obj.spec) ? obj.spec : {};
      const names = isPlainObject(spec.names) ? spec.names : {};
      const group = typeof spec.group === 'string' ? spec.group : '';
      if (group === '')
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.group' });
      if (typeof names.plural !== 'string' || names.plural === '') {
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.names.plural' });
      } else if (obj.metadata.name !== `${names.plural}.${group}`) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: "${obj.metadata.name ?? ''}": must be spec.names.plural+"."+spec.group`,
          field: 'metadata.name',
        });
      }
      if (typeof names.kind !== 'string' || names.kind === '') {
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.names.kind' });
      }
      const versions = Array.isArray(spec.versions) ? spec.versions : [];
      if (versions.length === 0)
        causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.versions' });
      break;
    }
    default:
      break;
  }
  if (causes.length > 0) throw invalid({ ...type }, obj.metadata.name ?? '', causes);
}
