// The InfluxDB metric provider: one Flux query (POST /api/v2/query) per measurement, the annotated CSV answer read into the records' values.
import type { Metric } from '../../manifest/analysis.ts';
import { secretScrubber } from '../secret-scrubber.ts';
import type { HostPolicy } from './host-policy.ts';
import { sendHttpRequest } from './http-request.ts';
import type { MeasureContext, MetricProvider, ProviderMeasurement } from './metric-provider.ts';
import { MetricProviderError } from './metric-provider-error.ts';
import type { ProviderSecrets } from './provider-secrets.ts';
import { goFloat } from './go-float-format.ts';
import { rateLimitDelayMs } from './rate-limit.ts';

const TYPE = 'influxdb';

/** The profile Secret Argo reads when `profile` is not set, in its controller's namespace, and its keys. */
export const INFLUXDB_DEFAULT_PROFILE = 'influxdb';
export const INFLUXDB_SECRET_KEYS = { address: 'address', authToken: 'authToken', org: 'org' } as const;
/** Argo's query timeout. */
export const INFLUXDB_TIMEOUT_MS = 30_000;
/** The CSV dialect asked for (the one InfluxDB's clients ask for): every annotation, a header, commas. */
export const INFLUXDB_DIALECT = {
  header: true,
  delimiter: ',',
  annotations: ['datatype', 'group', 'default'],
  commentPrefix: '#',
  dateTimeFormat: 'RFC3339',
} as const;

/** Options for {@link createInfluxdbProvider}. */
export interface InfluxdbProviderOptions {
  /** Reads the profile Secret (`influxdb`, or the metric's `profile`) in Rollgate's namespace. */
  secrets?: ProviderSecrets;
  /** Which hosts the address may be (`analysis.allowedHosts` / `deniedHosts`). */
  policy?: HostPolicy;
  /** Overrides {@link INFLUXDB_TIMEOUT_MS} (tests). */
  timeoutMs?: number;
}

interface Profile {
  address: string;
  authToken: string;
  org: string;
}

/** A record's value as Flux typed it: numbers (double, long, unsignedLong), booleans, text (string, times, durations), or null. */
export type FluxValue = number | boolean | string | null;

function fail(reason: string, metric?: string, retryAfterMs?: number): MetricProviderError {
  return new MetricProviderError(TYPE, reason, metric, retryAfterMs);
}

async function readProfile(name: string, secrets: ProviderSecrets | undefined): Promise<Profile> {
  const where = `Secret ${name} in Rollgate's namespace`;
  if (secrets === undefined) throw fail(`no Secret reader is configured to read ${where}`);
  let data: Readonly<Record<string, string>> | undefined;
  try {
    data = await secrets.read(name);
  } catch (error) {
    throw fail(`cannot read ${where}: ${(error as Error).message}`);
  }
  if (data === undefined) throw fail(`${where} not found (it holds address, authToken and org)`);
  const [address, authToken, org] = [data['address']?.trim(), data['authToken'], data['org']?.trim()];
  const missing = Object.entries({ address, authToken, org })
    .filter(([, v]) => !v)
    .map(([k]) => k);
  if (missing.length > 0 || !address || !authToken || !org)
    throw fail(`${where} has no ${missing.join(', ')}`);
  return { address, authToken, org };
}

/** RFC 4180 rows (quoted fields may hold commas, quotes and newlines); a blank line is an empty row. */
export function parseCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRow = (): void => {
    row.push(field);
    rows.push(row.length === 1 && row[0] === '' ? [] : row);
    row = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      endRow();
      i++;
    } else if (c === '\n') endRow();
    else field += c;
    i++;
  }
  if (field !== '' || row.length > 0) endRow();
  return rows;
}

function typed(raw: string, datatype: string, column: number): FluxValue {
  if (raw === '') return null;
  switch (datatype) {
    case 'double': {
      const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
      if (Number.isNaN(value) && raw !== 'NaN')
        throw fail(`column ${column}: ${JSON.stringify(raw)} is not a double`);
      return value;
    }
    case 'long':
    case 'unsignedLong': {
      if (!/^-?\d+$/.test(raw)) throw fail(`column ${column}: ${JSON.stringify(raw)} is not a ${datatype}`);
      return Number(raw);
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false')
        throw fail(`column ${column}: ${JSON.stringify(raw)} is not a boolean`);
      return raw === 'true';
    default:
      // string, dateTime:RFC3339(Nano), duration, base64Binary: their text.
      return raw;
  }
}

/**
 * The `_value` of every record of every table in an annotated CSV answer, in order, typed by the
 * table's `#datatype` annotation (an empty cell takes the `#default`). A table whose columns are
 * `error` and `reference` is InfluxDB reporting a failed query: its message is the error.
 */
export function mapFluxCsv(text: string): FluxValue[] {
  const values: FluxValue[] = [];
  let datatypes: string[] = [];
  let defaults: string[] = [];
  let header: string[] | undefined;
  for (const row of parseCsvRows(text)) {
    if (row.length === 0) {
      // A blank line ends a table; the next starts with its own annotations.
      header = undefined;
      datatypes = [];
      defaults = [];
      continue;
    }
    const first = row[0] ?? '';
    if (first.startsWith('#')) {
      if (header !== undefined) {
        header = undefined;
        datatypes = [];
        defaults = [];
      }
      if (first === '#datatype') datatypes = row;
      else if (first === '#default') defaults = row;
      continue;
    }
    if (header === undefined) {
      header = row;
      continue;
    }
    const errorAt = header.indexOf('error');
    if (errorAt > 0 && header.includes('reference'))
      throw fail(`the Flux query failed: ${row[errorAt] || '(no message)'}`);
    const at = header.indexOf('_value');
    if (at < 0) {
      values.push(null);
      continue;
    }
    const raw = row[at] === '' || row[at] === undefined ? (defaults[at] ?? '') : (row[at] as string);
    values.push(typed(raw, datatypes[at] ?? 'string', at));
  }
  return values;
}

/** Go's `%v` of one value of a `[]any` (fmt.Sprint, as Argo stores the list). */
function goValue(value: FluxValue): string {
  if (value === null) return '<nil>';
  return typeof value === 'number' ? goFloat(value) : String(value);
}

/** InfluxDB's error body (`{"code": "invalid", "message": "…"}`), or the body's start. */
function influxMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    const message = typeof parsed.message === 'string' ? parsed.message : '';
    const code = typeof parsed.code === 'string' ? parsed.code : '';
    if (message !== '' || code !== '')
      return code !== '' && message !== '' ? `${code}: ${message}` : message || code;
  } catch {
    // Not JSON (a proxy's page): its start says enough.
  }
  return body.trim().slice(0, 200) || '(empty body)';
}

/**
 * The InfluxDB provider, with Argo's fields and semantics: POSTs the metric's Flux `query` to
 * `<address>/api/v2/query?org=<org>` (the profile Secret `influxdb`, or `profile`, in Rollgate's
 * namespace, with `address`, `authToken` and `org`), the token as `Authorization: Token …`, within 30 s,
 * the measurement's time as the query's `now` (so `range(start: -15m)` ends at it).
 * The result is the list of every record's `_value` across the answer's tables (`result[0]`), stored as
 * Argo stores it (`[0.01 0.02]`); no record is an error. InfluxDB's own message makes the error of a
 * refused query; 429 also tells the run when to ask again.
 */
export function createInfluxdbProvider(options: InfluxdbProviderOptions = {}): MetricProvider {
  return {
    type: TYPE,
    async measure(metric: Metric, _run, ctx: MeasureContext): Promise<ProviderMeasurement> {
      const spec = metric.provider.influxdb;
      if (spec === undefined) throw fail('no influxdb provider on this metric', metric.name);
      let profile: Profile | undefined;
      try {
        if (!spec.query?.trim()) throw fail('query is required');
        profile = await readProfile(spec.profile || INFLUXDB_DEFAULT_PROFILE, options.secrets);
        const response = await sendHttpRequest({
          provider: TYPE,
          url: `${profile.address.replace(/\/+$/, '')}/api/v2/query?${new URLSearchParams({ org: profile.org }).toString()}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/csv',
            'accept-encoding': 'identity',
            authorization: `Token ${profile.authToken}`,
          },
          // `now` pins the query's relative ranges to the measurement's time (InfluxDB would take its own clock's).
          body: JSON.stringify({
            query: spec.query,
            type: 'flux',
            dialect: INFLUXDB_DIALECT,
            now: ctx.now.toISOString(),
          }),
          timeoutMs: options.timeoutMs ?? INFLUXDB_TIMEOUT_MS,
          ...(options.policy && { policy: options.policy }),
        });
        if (response.status === 429)
          throw fail(
            `HTTP 429 (rate limited): ${influxMessage(response.body)}`,
            undefined,
            rateLimitDelayMs(response.headers, ctx.now),
          );
        if (response.status < 200 || response.status >= 300)
          throw fail(`HTTP ${response.status}: ${influxMessage(response.body)}`);
        const values = mapFluxCsv(response.body);
        if (values.length === 0) throw fail('no results returned from flux query');
        return { value: values, raw: `[${values.map(goValue).join(' ')}]` };
      } catch (error) {
        if (!(error instanceof MetricProviderError)) throw error;
        const scrub = secretScrubber(profile === undefined ? [] : [profile.authToken]);
        throw fail(scrub(error.reason), metric.name, error.retryAfterMs);
      }
    },
  };
}
