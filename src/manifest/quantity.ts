// Kubernetes resource quantities ("100m", "1.5Gi", "2e3", 4): syntax check and numeric value.
import { QuantityError } from './quantity-error.ts';

export { QuantityError } from './quantity-error.ts';

const BINARY_SI: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SI: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

// The grammar of k8s.io/apimachinery resource.Quantity: signed decimal number, then one suffix
// (binary SI, decimal SI, or a decimal exponent).
const QUANTITY =
  /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E)?)$/;

/**
 * Parses a Kubernetes resource quantity into its numeric value (CPU in cores, memory in bytes):
 * `"500m"` → 0.5, `"128Mi"` → 134217728, `"1e3"` → 1000, `2` → 2.
 *
 * @throws QuantityError when the value does not follow the Kubernetes quantity syntax.
 */
export function parseQuantity(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new QuantityError(value, 'must be a finite number');
    return value;
  }
  if (typeof value !== 'string') throw new QuantityError(value, 'must be a string or a number');
  const match = QUANTITY.exec(value);
  if (match === null) {
    throw new QuantityError(
      value,
      'expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
    );
  }
  const [, number = '0', binary, exponent, decimal = ''] = match;
  const base = Number(number);
  if (binary !== undefined) return base * (BINARY_SI[binary] ?? 1);
  if (exponent !== undefined) return base * 10 ** Number(exponent.slice(1));
  return base * (DECIMAL_SI[decimal] ?? 1);
}

/** True when {@link parseQuantity} would accept the value. */
export function isQuantity(value: unknown): value is string | number {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    parseQuantity(value);
    return true;
  } catch {
    return false;
  }
}

const DECIMAL_EXPONENT: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_EXPONENT: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/**
 * True when the quantity is a whole number ("2", "2000m", "1.5Ki"), as the API server requires of extended
 * resources (`nvidia.com/gpu`). Exact (decimal digits as integers), where {@link parseQuantity}'s floating
 * point value could be off by a rounding error. A quantity that does not parse is not whole.
 */
export function isWholeQuantity(value: string | number): boolean {
  const match = QUANTITY.exec(String(value));
  if (match === null) return false;
  const [, number = '0', binary, exponent, decimal = ''] = match;
  const [whole = '', fraction = ''] = number.replace(/^[+-]/, '').split('.');
  // number = digits / 10^fraction.length; the suffix multiplies by 2^b or 10^e.
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let denominator = 10n ** BigInt(fraction.length);
  if (binary !== undefined) numerator *= 2n ** BigInt(BINARY_EXPONENT[binary] ?? 0);
  else {
    const power = exponent !== undefined ? Number(exponent.slice(1)) : (DECIMAL_EXPONENT[decimal] ?? 0);
    // Beyond any real quantity: no BigInt of a million digits for "1e999999".
    if (Math.abs(power) > 100) return power > 0 || numerator === 0n;
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
  }
  return numerator % denominator === 0n;
}
