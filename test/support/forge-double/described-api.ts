// A forge's published API description (an excerpt kept under descriptions/, its source named inside) as the judge of
// the requests a double receives: the operation, its path and query parameters, and the JSON body against its schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'body' | 'cookie';
  required?: boolean;
  /** Swagger 2.0 keeps a parameter's type on itself; OpenAPI 3 in `schema`. */
  type?: string;
  enum?: unknown[];
  schema?: Json;
}

interface Route {
  method: string;
  template: string;
  regex: RegExp;
  operation: Json;
  parameters: Parameter[];
  /** JSON pointer (in the document) of the body's schema, when the operation takes one. */
  bodyPointer?: string;
  bodyRequired: boolean;
}

/** A request matched to its operation, with the problems it has against the description (none: it conforms). */
export interface DescribedCheck {
  template?: string;
  /** Path parameters of the matched template, URL-decoded. */
  params: Record<string, string>;
  problems: string[];
}

export interface DescribedApiOptions {
  /** Query parameters the API takes on every operation, documented apart (Bitbucket's `q`, `page`, `pagelen`). */
  commonQuery?: string[];
  /** Azure DevOps routes ignore case (`pullrequests` and `pullRequests` are one route). */
  caseInsensitive?: boolean;
  /**
   * Problems the vendor's API does not have although its description says so, each with the reason it is
   * accepted (e.g. a field the API takes and answers with that the description leaves out).
   */
  tolerated?: Record<string, string>;
}

const DOCUMENT_ID = 'described-api';
const DESCRIPTIONS = join(import.meta.dirname, 'descriptions');

const pointerPart = (part: string): string => part.replace(/~/g, '~0').replace(/\//g, '~1');

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 10).map((error) => {
    const extra =
      error.keyword === 'enum'
        ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
        : '';
    return `body${error.instancePath}: ${error.message ?? error.keyword}${extra}`;
  });
}

/** One description file of descriptions/, loaded and indexed once. */
export class DescribedApi {
  private readonly document: Json;
  private readonly routes: Route[] = [];
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Where the description comes from, as its `x-excerpt-of` says. */
  readonly source: string;

  constructor(
    file: string,
    private readonly options: DescribedApiOptions = {},
  ) {
    this.document = JSON.parse(readFileSync(join(DESCRIPTIONS, file), 'utf8')) as Json;
    this.source = String(this.document['x-excerpt-of'] ?? file);
    // Formats such as int32 and the vendors' extension keywords (x-ms-enum, discriminator) are not checked.
    this.ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateSchema: false,
      logger: false,
      validateFormats: false,
    });
    this.ajv.addSchema(this.document, DOCUMENT_ID);
    this.index();
  }

  private resolve<T>(node: unknown): T {
    let current = node as Json;
    for (let depth = 0; depth < 10 && typeof current?.$ref === 'string'; depth += 1) {
      let target: unknown = this.document;
      for (const part of (current.$ref as string).replace(/^#\//, '').split('/'))
        target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      current = target as Json;
    }
    return current as T;
  }

  private index(): void {
    const paths = this.document.paths as Record<string, Json>;
    for (const [template, item] of Object.entries(paths)) {
      const shared = ((item.parameters as unknown[] | undefined) ?? []).map((p) =>
        this.resolve<Parameter>(p),
      );
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') continue;
        const op = operation as Json;
        const parameters = [
          ...shared,
          ...((op.parameters as unknown[] | undefined) ?? []).map((p) => this.resolve<Parameter>(p)),
        ];
        const base = `#/paths/${pointerPart(template)}/${method}`;
        let bodyPointer: string | undefined;
        let bodyRequired = false;
        const bodyIndex = ((op.parameters as unknown[] | undefined) ?? []).findIndex(
          (p) => this.resolve<Parameter>(p).in === 'body',
        );
        if (bodyIndex >= 0) {
          bodyPointer = `${base}/parameters/${bodyIndex}/schema`;
          bodyRequired = parameters.find((p) => p.in === 'body')?.required === true;
        } else if (op.requestBody !== undefined) {
          const requestBody = op.requestBody as Json;
          if ((requestBody.content as Json | undefined)?.['application/json'] !== undefined) {
            bodyPointer = `${base}/requestBody/content/application~1json/schema`;
            bodyRequired = requestBody.required === true;
          }
        }
        const pattern = template
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
          .join('');
        this.routes.push({
          method: method.toUpperCase(),
          template,
          regex: new RegExp(`^${pattern}$`, this.options.caseInsensitive ? 'i' : ''),
          operation: op,
          parameters,
          ...(bodyPointer === undefined ? {} : { bodyPointer }),
          bodyRequired,
        });
      }
    }
    // Literal segments win over parameters (`/commit/{node}/statuses` over `/commit/{node}`).
    this.routes.sort(
      (a, b) => b.template.replace(/\{[^}]+\}/g, '').length - a.template.replace(/\{[^}]+\}/g, '').length,
    );
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (validate === undefined) {
      // The pointer goes into a URI fragment: each part percent-encoded (templates carry braces).
      const fragment = pointer
        .split('/')
        .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
        .join('/');
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${fragment}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  /**
   * Property names a schema documents (through `$ref` and `allOf`), or undefined when it takes any (an
   * `additionalProperties` schema or `true`, or no `properties` at all).
   */
  private documentedProperties(schema: Json): { names: Set<string>; of: Map<string, Json> } | undefined {
    const resolved = this.resolve<Json>(schema);
    const names = new Set<string>();
    const of = new Map<string, Json>();
    let open = false;
    let any = false;
    const visit = (node: Json): void => {
      const s = this.resolve<Json>(node);
      for (const part of (s.allOf as Json[] | undefined) ?? []) visit(part);
      if (s.properties !== undefined) {
        any = true;
        for (const [name, value] of Object.entries(s.properties as Json)) {
          names.add(name);
          of.set(name, value as Json);
        }
      }
      if (s.additionalProperties !== undefined && s.additionalProperties !== false) open = true;
    };
    visit(resolved);
    return open || !any ? undefined : { names, of };
  }

  /** Keys of `value` that its schema does not document, with their paths (vendors' schemas rarely close objects). */
  private undocumented(value: unknown, schema: Json, at: string): string[] {
    if (Array.isArray(value)) {
      const items = this.resolve<Json>(schema).items as Json | undefined;
      return items === undefined
        ? []
        : value.flatMap((item, i) => this.undocumented(item, items, `${at}/${i}`));
    }
    if (value === null || typeof value !== 'object') return [];
    const documented = this.documentedProperties(schema);
    if (documented === undefined) return [];
    return Object.entries(value).flatMap(([key, inner]) => {
      const propertySchema = documented.of.get(key);
      if (propertySchema === undefined) return [`${at}/${key}: not a documented property`];
      return this.undocumented(inner, propertySchema, `${at}/${key}`);
    });
  }

  /** Checks one request; an unknown path or method is a problem with no template. */
  check(
    method: string,
    path: string,
    query: URLSearchParams,
    rawBody: Buffer,
    contentType?: string,
  ): DescribedCheck {
    const candidates = this.routes.filter((route) => route.regex.test(path));
    const route = candidates.find((candidate) => candidate.method === method);
    if (route === undefined)
      return {
        params: {},
        problems: [`${method} ${path}: not an operation of the description (${this.source})`],
      };
    const problems: string[] = [];
    const names = [...route.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');
    const values = (route.regex.exec(path) ?? []).slice(1);
    const params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(values[i] ?? '')]));

    const queryParams = route.parameters.filter((p) => p.in === 'query');
    for (const key of new Set(query.keys())) {
      const declared = queryParams.find((p) => p.name === key);
      if (declared === undefined) {
        if (!(this.options.commonQuery ?? []).includes(key))
          problems.push(`query/${key}: not a documented parameter`);
        continue;
      }
      const value = query.get(key) ?? '';
      const type = declared.type ?? (declared.schema?.type as string | undefined);
      const allowed = declared.enum ?? (declared.schema?.enum as unknown[] | undefined);
      if (type === 'integer' && !/^-?\d+$/.test(value)) problems.push(`query/${key}: must be an integer`);
      if (type === 'boolean' && value !== 'true' && value !== 'false')
        problems.push(`query/${key}: must be a boolean`);
      if (allowed !== undefined && !allowed.includes(value))
        problems.push(`query/${key}: must be one of ${allowed.join(', ')}`);
    }
    for (const p of queryParams)
      if (p.required && !query.has(p.name)) problems.push(`query/${p.name}: required`);

    if (rawBody.length === 0) {
      if (route.bodyRequired) problems.push('body: required');
    } else if (route.bodyPointer === undefined) {
      problems.push('body: this operation takes none');
    } else if (!(contentType ?? '').includes('application/json')) {
      problems.push(`body: sent as ${contentType ?? 'no content type'}, not application/json`);
    } else {
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        problems.push('body: not JSON');
      }
      if (body !== undefined) {
        const validate = this.validator(route.bodyPointer);
        if (!validate(body)) problems.push(...formatErrors(validate.errors));
        const schema = this.resolve<Json>({ $ref: route.bodyPointer });
        problems.push(...this.undocumented(body, schema, 'body'));
      }
    }
    const tolerated = this.options.tolerated ?? {};
    return { template: route.template, params, problems: problems.filter((p) => !(p in tolerated)) };
  }
}
