// Kubernetes label selectors (matchLabels + matchExpressions) evaluated against a label set.
import type { LabelSelector } from './kube-meta.ts';

/** Why a label set does not satisfy a selector, one entry per unmet requirement (empty when it matches). */
export function selectorMismatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  for (const [key, want] of Object.entries(selector.matchLabels ?? {})) {
    const have = labels[key];
    if (have === undefined) problems.push(`label ${key}=${want} is missing`);
    else if (have !== want)
      problems.push(`label ${key} is ${JSON.stringify(have)}, the selector wants ${JSON.stringify(want)}`);
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const have = labels[key];
    const ok =
      operator === 'In'
        ? have !== undefined && values.includes(have)
        : operator === 'NotIn'
          ? have === undefined || !values.includes(have)
          : operator === 'Exists'
            ? have !== undefined
            : have === undefined;
    if (!ok)
      problems.push(
        `label ${key} does not satisfy "${key} ${operator}${values.length > 0 ? ` (${values.join(', ')})` : ''}"`,
      );
  }
  return problems;
}

/** True when the selector has no requirement at all (Kubernetes refuses such a selector on workloads). */
export function isEmptySelector(selector: LabelSelector): boolean {
  return (
    Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0
  );
}

/** metav1.LabelSelector as written in a spec (operators not narrowed: what a cluster object holds). */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | undefined }> | undefined;
}

/**
 * Renders a selector in the API's string syntax (`app=web,tier in (a,b),!legacy`), as a `labelSelector`
 * query and a Rollout's status.selector carry it; an empty selector renders '' (which selects everything).
 */
export function formatLabelSelector(selector: LabelSelectorSpec): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  ))
    parts.push(`${key}=${value}`);
  for (const expression of selector.matchExpressions ?? []) {
    const values = [...(expression.values ?? [])].sort().join(',');
    switch (expression.operator) {
      case 'In':
        parts.push(`${expression.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${expression.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(expression.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${expression.key}`);
        break;
      default:
        throw new RangeError(
          `unknown label selector operator ${expression.operator} for key ${expression.key}`,
        );
    }
  }
  return parts.join(',');
}
