// How Go's fmt prints a float64 with %v, the form Argo stores CloudWatch and InfluxDB measurements in.

/** Go's `%v` of a float64: shortest digits, exponent form (`1e-05`, `1e+21`) below 1e-4 and from 1e21. */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent >= -4 && exponent < 21) return String(value);
  const [mantissa = '', power = '0'] = value.toExponential().split('e');
  const sign = power.startsWith('-') ? '-' : '+';
  return `${mantissa}e${sign}${power.replace(/^[+-]/, '').padStart(2, '0')}`;
}
