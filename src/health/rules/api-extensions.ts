// Health rules for what extends the API: a CustomResourceDefinition is usable once Established, an APIService
// once Available.
import { conditionOf, describeCondition } from '../live-fields.ts';
import type { HealthRule } from '../object-health.ts';

/** Names refused → Degraded (a change is needed); Established → Healthy; else Progressing. */
export const customResourceDefinitionHealth: HealthRule = (live) => {
  const names = conditionOf(live, 'NamesAccepted');
  if (names?.status === 'False') return { status: 'Degraded', message: describeCondition(names) };
  const established = conditionOf(live, 'Established');
  if (established?.status === 'True') return { status: 'Healthy', message: '' };
  return {
    status: 'Progressing',
    message: established ? describeCondition(established) || 'not established' : 'not established',
  };
};

/**
 * Available → Healthy; otherwise Progressing with the condition's reason: a new APIService is not available
 * until the Service behind it has ready endpoints, which is expected to come.
 */
export const apiServiceHealth: HealthRule = (live) => {
  const available = conditionOf(live, 'Available');
  if (available?.status === 'True') return { status: 'Healthy', message: '' };
  return {
    status: 'Progressing',
    message: available ? describeCondition(available) || 'not available' : 'not available',
  };
};

export const API_EXTENSION_RULES: ReadonlyArray<readonly [string, HealthRule]> = [
  ['apiextensions.k8s.io/CustomResourceDefinition', customResourceDefinitionHealth],
  ['apiregistration.k8s.io/APIService', apiServiceHealth],
];
