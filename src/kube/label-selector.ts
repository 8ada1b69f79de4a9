// LabelSelector (matchLabels + matchExpressions) → the `labelSelector` query string the API server expects.

/** metav1.LabelSelector as written in a spec. */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | undefined }> | undefined;
}

/** Renders a selector in the API's string syntax; an empty selector renders '' (which selects everything). */
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
