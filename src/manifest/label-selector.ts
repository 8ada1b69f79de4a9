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
