// Hand-written parameter checks for the forge APIs without a usable machine-readable description (GitLab, Gitea):
// required fields, types and enums as their API documentation lists them, and nothing undocumented.

export type ParamType = 'string' | 'integer' | 'boolean' | 'string[]' | 'integer[]' | 'string|string[]';

export interface ParamSpec {
  type: ParamType;
  required?: boolean;
  enum?: readonly string[];
}

/** Every parameter an endpoint documents; anything else is a problem. */
export type ParamsSpec = Record<string, ParamSpec>;

function typeProblem(value: unknown, spec: ParamSpec, fromQuery: boolean): string | undefined {
  const isInteger = (v: unknown): boolean =>
    fromQuery ? typeof v === 'string' && /^-?\d+$/.test(v) : Number.isInteger(v);
  const isString = (v: unknown): boolean => typeof v === 'string';
  switch (spec.type) {
    case 'string':
      return isString(value) ? undefined : 'must be a string';
    case 'integer':
      return isInteger(value) ? undefined : 'must be an integer';
    case 'boolean':
      return (fromQuery ? value === 'true' || value === 'false' : typeof value === 'boolean')
        ? undefined
        : 'must be a boolean';
    case 'string[]':
      return Array.isArray(value) && value.every(isString) ? undefined : 'must be an array of strings';
    case 'integer[]':
      return Array.isArray(value) && value.every(isInteger) ? undefined : 'must be an array of integers';
    case 'string|string[]':
      return isString(value) || (Array.isArray(value) && value.every(isString))
        ? undefined
        : 'must be a string or an array of strings';
  }
}

/**
 * The problems of `values` against `spec` (empty when they conform). `fromQuery` reads every value as the
 * string a query carries; a query array is written `key[]=a&key[]=b`.
 */
export function paramProblems(
  where: 'body' | 'query',
  values: Record<string, unknown>,
  spec: ParamsSpec,
): string[] {
  const problems: string[] = [];
  const fromQuery = where === 'query';
  for (const [name, value] of Object.entries(values)) {
    const param = spec[name];
    if (param === undefined) {
      problems.push(`${where}/${name}: not a documented parameter`);
      continue;
    }
    if (value === null) continue;
    const typeIssue = typeProblem(value, param, fromQuery);
    if (typeIssue) problems.push(`${where}/${name}: ${typeIssue}`);
    else if (param.enum && typeof value === 'string' && !param.enum.includes(value))
      problems.push(`${where}/${name}: must be one of ${param.enum.join(', ')}`);
  }
  for (const [name, param] of Object.entries(spec)) {
    if (param.required && values[name] === undefined) problems.push(`${where}/${name}: required`);
  }
  return problems;
}

/** A query as parameters: `key[]` repeated becomes one array under `key`, others keep their last value. */
export function queryParams(query: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of query) {
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2);
      const list = Array.isArray(params[name]) ? (params[name] as string[]) : [];
      params[name] = [...list, value];
    } else {
      params[key] = value;
    }
  }
  return params;
}

/** A JSON request body as parameters, or the problem with it. */
export function bodyParams(
  rawBody: Buffer,
  contentType: string | undefined,
): { params: Record<string, unknown> } | { problem: string } {
  if (rawBody.length === 0) return { params: {} };
  if (!(contentType ?? '').includes('application/json'))
    return { problem: `body: sent as ${contentType ?? 'no content type'}, not application/json` };
  try {
    const parsed: unknown = JSON.parse(rawBody.toString('utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return { problem: 'body: must be a JSON object' };
    return { params: parsed as Record<string, unknown> };
  } catch {
    return { problem: 'body: not JSON' };
  }
}
