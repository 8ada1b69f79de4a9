// GitHub's official OpenAPI description as the judge of the double: route matching, request and response validation.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** The api.github.com description (GitHub Enterprise Server's is a subset for what Rollgate calls). */
const DESCRIPTION_FILE = '@octokit/openapi/generated/api.github.com.json';
const DOCUMENT_ID = 'github-openapi';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
  'x-multi-segment'?: boolean;
}

/** One operation of the description, as matched against a request. */
export interface MatchedOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. `/repos/{owner}/{repo}/pulls/{pull_number}`. */
  template: string;
  /** Path parameters, decoded and converted to their schema types. */
  params: Record<string, string | number | boolean>;
  /** Query parameters, converted to their schema types. */
  query: Record<string, unknown>;
}

interface Route {
  method: string;
  template: string;
  regex: RegExp;
  names: string[];
  literalLength: number;
  operation: Json;
}

function escapePointer(part: string): string {
  return encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'));
}

/**
 * OpenAPI 3.0 leaves open whether `nullable: true` admits null past an `enum` without null; GitHub means
 * it does (an unfinished check run's `conclusion` is null), JSON Schema validators say it does not.
 */
function allowNullInNullableEnums(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) allowNullInNullableEnums(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null))
    schema.enum.push(null);
  for (const value of Object.values(schema)) allowNullInNullableEnums(value);
}

function formatErrors(where: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 10).map((error) => {
    const at = error.instancePath === '' ? where : `${where}${error.instancePath}`;
    const extra =
      error.keyword === 'additionalProperties'
        ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
        : error.keyword === 'enum'
          ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
          : '';
    return `${at}: ${error.message ?? error.keyword}${extra}`;
  });
}

/**
 * The description loaded once per process; operations' schemas are compiled the first time a request
 * needs them (the whole description would take seconds to compile).
 */
class GitHubDescription {
  private readonly document: Json;
  private readonly routes: Route[] = [];
  private readonly bodies: Ajv;
  private readonly parameters: Ajv;
  private readonly compiled = new Map<string, ValidateFunction | undefined>();

  constructor() {
    const require = createRequire(import.meta.url);
    this.document = JSON.parse(readFileSync(require.resolve(DESCRIPTION_FILE), 'utf8')) as Json;
    allowNullInNullableEnums(this.document);
    // Bodies are checked as sent; parameters arrive as strings and are converted to their declared types.
    // Only bodies need the whole document (their schemas reference components); parameter schemas are
    // resolved here, so that instance stays small.
    this.bodies = this.newAjv(false);
    this.bodies.addSchema(this.document, DOCUMENT_ID);
    this.parameters = this.newAjv(true);
    this.indexRoutes();
  }

  private newAjv(coerceTypes: boolean): Ajv {
    const ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateSchema: false,
      logger: false,
      coerceTypes,
    });
    addFormats(ajv);
    // GitHub's own format names; the rest of the description uses standard ones.
    ajv.addFormat('repo.nwo', /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/);
    return ajv;
  }

  /** A copy of `node` with every reference replaced by its target (for the small parameter schemas). */
  private inline(node: unknown, depth = 0): unknown {
    if (depth > 20) throw new Error('parameter schema nests references too deeply');
    if (Array.isArray(node)) return node.map((item) => this.inline(item, depth + 1));
    if (node === null || typeof node !== 'object') return node;
    const resolved = this.resolve<Json>(node);
    return Object.fromEntries(
      Object.entries(resolved).map(([key, value]) => [key, this.inline(value, depth + 1)]),
    );
  }

  /** Follows `#/components/...` references (parameters are often references). */
  resolve<T>(node: unknown): T {
    let current = node as Json;
    for (let depth = 0; depth < 10 && typeof current?.$ref === 'string'; depth += 1) {
      const path = (current.$ref as string).replace(/^#\//, '').split('/');
      let target: unknown = this.document;
      for (const part of path) {
        target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      }
      current = target as Json;
    }
    return current as T;
  }

  private indexRoutes(): void {
    const paths = this.document.paths as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete', 'head'].includes(method)) continue;
        const parameters = this.operationParameters(item, operation);
        const names: string[] = [];
        let literalLength = 0;
        const pattern = template
          .split('/')
          .map((segment) =>
            segment.replace(
              /\{([^}]+)\}|([^{]+)/g,
              (_match, name: string | undefined, literal: string | undefined) => {
                if (literal !== undefined) {
                  literalLength += literal.length;
                  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
                }
                const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
                names.push(name ?? '');
                return parameter?.['x-multi-segment'] ? '(.+)' : '([^/]+)';
              },
            ),
          )
          .join('/');
        this.routes.push({
          method: method.toUpperCase(),
          template,
          regex: new RegExp(`^${pattern}$`),
          names,
          literalLength,
          operation,
        });
      }
    }
  }

  private operationParameters(item: Json, operation: Json): Parameter[] {
    const shared = ((item.parameters as unknown[]) ?? []).map((p) => this.resolve<Parameter>(p));
    const own = ((operation.parameters as unknown[]) ?? []).map((p) => this.resolve<Parameter>(p));
    const byKey = new Map<string, Parameter>();
    for (const parameter of [...shared, ...own]) byKey.set(`${parameter.in}:${parameter.name}`, parameter);
    return [...byKey.values()];
  }

  /** The operation for `method` and the raw (still percent-encoded) `path`; the most literal template wins. */
  match(method: string, path: string): Route | undefined {
    let best: Route | undefined;
    for (const route of this.routes) {
      if (route.method !== method || !route.regex.test(path)) continue;
      if (!best || route.literalLength > best.literalLength) best = route;
    }
    return best;
  }

  private validator(key: string, schema: () => Json | undefined, ajv: Ajv): ValidateFunction | undefined {
    if (!this.compiled.has(key)) {
      const target = schema();
      this.compiled.set(key, target ? ajv.compile(target) : undefined);
    }
    return this.compiled.get(key);
  }

  /**
   * Checks a request against the description. Returns the operation (with typed parameters) and every
   * way the request breaks the description; an empty list means GitHub would accept its shape.
   */
  validateRequest(request: {
    method: string;
    path: string;
    query: URLSearchParams;
    body: unknown;
    hasBody: boolean;
    contentType: string | undefined;
  }): { operation?: MatchedOperation; problems: string[] } {
    const route = this.match(request.method, request.path);
    if (!route)
      return { problems: [`no operation ${request.method} ${request.path} in GitHub's description`] };
    const item = (this.document.paths as Record<string, Json>)[route.template] as Json;
    const parameters = this.operationParameters(item, route.operation);
    const operationId = String(route.operation.operationId);
    const problems: string[] = [];

    const captured = route.regex.exec(request.path) ?? [];
    const rawParams: Record<string, string> = {};
    route.names.forEach((name, index) => {
      rawParams[name] = decodeURIComponent(captured[index + 1] ?? '');
    });
    const params = this.checkParameters(operationId, 'path', parameters, rawParams, problems);

    const rawQuery: Record<string, string | string[]> = {};
    for (const key of new Set(request.query.keys())) {
      const values = request.query.getAll(key);
      rawQuery[key] = values.length === 1 ? (values[0] ?? '') : values;
    }
    const query = this.checkParameters(operationId, 'query', parameters, rawQuery, problems);

    const requestBody = this.resolve<Json | undefined>(route.operation.requestBody);
    if (requestBody) {
      const pointer = [route.template, route.method.toLowerCase(), 'requestBody'];
      if (!request.hasBody) {
        if (requestBody.required === true) problems.push('body: required');
      } else if (!/^application\/json\b/.test(request.contentType ?? '')) {
        problems.push(`body: content-type ${request.contentType ?? '(none)'} is not application/json`);
      } else {
        const validate = this.validator(
          `${operationId} body`,
          () => ({
            $ref: `${DOCUMENT_ID}#/paths/${[...pointer, 'content', 'application/json', 'schema'].map(escapePointer).join('/')}`,
          }),
          this.bodies,
        );
        if (validate && !validate(request.body)) problems.push(...formatErrors('body', validate.errors));
      }
    } else if (request.hasBody) {
      problems.push('body: the operation takes none');
    }

    return {
      operation: {
        operationId,
        method: route.method,
        template: route.template,
        params: params as Record<string, string | number | boolean>,
        query,
      },
      problems,
    };
  }

  private checkParameters(
    operationId: string,
    location: 'path' | 'query',
    parameters: Parameter[],
    values: Record<string, string | string[]>,
    problems: string[],
  ): Record<string, unknown> {
    const declared = parameters.filter((p) => p.in === location);
    const validate = this.validator(
      `${operationId} ${location}`,
      () => ({
        type: 'object',
        properties: Object.fromEntries(declared.map((p) => [p.name, this.inline(p.schema ?? {})])),
        required: declared.filter((p) => p.required).map((p) => p.name),
        // GitHub ignores unknown query parameters; the double does not, so a misspelt filter is caught.
        additionalProperties: false,
      }),
      this.parameters,
    );
    const typed: Record<string, unknown> = { ...values };
    if (validate && !validate(typed)) problems.push(...formatErrors(location, validate.errors));
    return typed;
  }

  /**
   * Checks what the double answers against the operation's documented response for that status. Statuses
   * the description does not document (rate limits, 5xx faults) are not checked.
   */
  validateResponse(operation: MatchedOperation, status: number, body: unknown): string[] {
    const responses = (
      (this.document.paths as Record<string, Json>)[operation.template]?.[
        operation.method.toLowerCase()
      ] as Json
    ).responses as Json;
    const documented = this.resolve<Json | undefined>(responses[String(status)]);
    if (!documented)
      return status < 400 ? [`status ${status} is not documented for ${operation.operationId}`] : [];
    const content = (documented.content as Json | undefined)?.['application/json'] as Json | undefined;
    if (!content?.schema) return [];
    const schema = content.schema as Json;
    // Most answers are one component (or a list of one): validating by component shares one compiled
    // validator among the operations that return it (a pull request schema takes ~0.5 s to compile).
    const items = schema.type === 'array' ? (schema.items as Json | undefined) : undefined;
    if (typeof schema.$ref === 'string' || typeof items?.$ref === 'string') {
      const validate = this.component(String(schema.$ref ?? items?.$ref));
      const elements = items && Array.isArray(body) ? body : items ? undefined : [body];
      if (!elements) return [`response ${status}: must be array`];
      for (const [index, element] of elements.entries()) {
        if (!validate(element))
          return formatErrors(items ? `response ${status}/${index}` : `response ${status}`, validate.errors);
      }
      return [];
    }
    const responseRef = (responses[String(status)] as Json).$ref;
    const base =
      typeof responseRef === 'string'
        ? `${DOCUMENT_ID}${responseRef}`
        : `${DOCUMENT_ID}#/paths/${[operation.template, operation.method.toLowerCase(), 'responses', String(status)].map(escapePointer).join('/')}`;
    const validate = this.validator(
      `${operation.operationId} response ${status}`,
      () => ({ $ref: `${base}/content/application~1json/schema` }),
      this.bodies,
    );
    if (validate && !validate(body)) return formatErrors(`response ${status}`, validate.errors);
    return [];
  }

  private component(ref: string): ValidateFunction {
    const validate = this.bodies.getSchema(`${DOCUMENT_ID}${ref}`);
    if (!validate) throw new Error(`GitHub's description has no ${ref}`);
    return validate;
  }
}

let shared: GitHubDescription | undefined;

/** The process-wide description (loaded on first use: the file is 13 MB). */
export function githubDescription(): GitHubDescription {
  shared ??= new GitHubDescription();
  return shared;
}

export type { GitHubDescription };
