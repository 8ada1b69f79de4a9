// LabelSelector (matchLabels + matchExpressions) → the `labelSelector` query string the API server expects.

export { formatLabelSelector, type LabelSelectorSpec } from '../manifest/label-selector.ts';
import type { LabelSelectorSpec } from '../manifest/label-selector.ts';

/**
 * Whether `labels` satisfy the selector, as the API server decides for a `labelSelector` list: what the
 * informer cache uses to answer the reads that would have been selector lists.
 */
export function matchesLabelSelector(
  selector: LabelSelectorSpec,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (have[key] !== value) return false;
  for (const expression of selector.matchExpressions ?? []) {
    const value = have[expression.key];
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        throw new RangeError(
          `unknown label selector operator ${expression.operator} for key ${expression.key}`,
        );
    }
  }
  return true;
}
