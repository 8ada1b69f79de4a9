// Values printed the way kube-apiserver's Go field errors print them, so 422 messages read like a cluster's.

/** Go's `%v` of a float64: shortest digits, exponent form from 1e+06 up and below 1e-04 (`1e+06`, `0.5`). */
export function goFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  if (value === 0) return '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  // strconv's shortest 'g' form switches to an exponent outside [-4, 6), unlike JSON's 21.
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

/** A number as decoded by the API server: int64 when integral (printed plainly), else float64. */
function goNumber(value: number): string {
  return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
    ? String(value)
    : goFloat(value);
}

/** Go's `%#v` of a decoded JSON value inside a map or slice. */
function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `map[string]interface {}{${entries.map(([k, v]) => `${JSON.stringify(k)}:${goSyntax(v)}`).join(', ')}}`;
}

/** The bad value of a field error: `5`, `true`, `"text"` (quoted), `null`, Go syntax for maps and lists. */
export function goFieldValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}
