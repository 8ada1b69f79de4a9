// Reads a measurement's stored value back into what a condition sees as `result`.

/** The marker the run executor appends to a value it cut (src/analysis/run-executor.ts keeps 256 characters). */
const CUT = /… \(\d+ more characters\)$/;

// Prometheus stores NaN and ±Inf as such inside a list ("[0.5,NaN,+Inf]"), which JSON cannot read.
const NUMBER_LIST = /^\[\s*(?:[^[\]{}",]+(?:\s*,\s*[^[\]{}",]+)*)?\s*\]$/;

function numberToken(token: string): number | undefined {
  const text = token.trim();
  if (text === 'NaN') return NaN;
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  const n = Number(text);
  return text !== '' && Number.isFinite(n) ? n : undefined;
}

/** A stored value that cannot be replayed (cut when it was stored). */
export class RecordedValueError extends Error {
  override readonly name = 'RecordedValueError';
  readonly code = 'rollgate.analysis.recorded-value';
}

/**
 * The value a provider answered, from the text a measurement stored: JSON where it reads as JSON (how
 * every provider stores lists, numbers and objects), a list of numbers with Prometheus' `NaN` / `+Inf`
 * / `-Inf`, a bare `NaN` / `±Inf`, else the text itself (a string result). A value the executor cut at
 * 256 characters is refused: replaying the start of a list would judge other data.
 * @throws RecordedValueError for a cut value.
 */
export function recordedValue(text: string): unknown {
  if (CUT.test(text)) throw new RecordedValueError('the stored value was cut at 256 characters');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // not JSON: one of the shapes below
  }
  if (NUMBER_LIST.test(text.trim())) {
    const inner = text.trim().slice(1, -1);
    const numbers = inner.trim() === '' ? [] : inner.split(',').map(numberToken);
    if (numbers.every((n) => n !== undefined)) return numbers;
  }
  const single = numberToken(text);
  return single !== undefined && !/^[+-]?\d/.test(text.trim()) ? single : text;
}
