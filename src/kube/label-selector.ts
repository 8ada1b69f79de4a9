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
