// The part of a published API description a double checks requests against: the shapes one operation reaches, documentation left out.

type Json = unknown;

function withoutDocumentation(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutDocumentation);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(
        ([key]) =>
          !['smithy.api#documentation', 'smithy.api#examples', 'description', 'example', 'examples'].includes(
            key,
          ),
      )
      .map(([key, inner]) => [key, withoutDocumentation(inner)]),
  );
}

/** A Smithy shape as the JSON AST writes it (the fields the double reads). */
export interface SmithyShape {
  type: string;
  members?: Record<string, { target: string; traits?: Record<string, unknown> }>;
  member?: { target: string };
  input?: { target: string };
  output?: { target: string };
  errors?: Array<{ target: string }>;
  traits?: Record<string, unknown>;
}

/** A Smithy JSON AST's service trait set and the shapes `operation` reaches (its input, output and errors, transitively). */
export function smithyOperationExcerpt(
  model: { shapes: Record<string, SmithyShape> },
  service: string,
  operation: string,
): { serviceVersion: unknown; serviceTraits: Record<string, unknown>; shapes: Record<string, SmithyShape> } {
  const shapes: Record<string, SmithyShape> = {};
  const visit = (id: string): void => {
    const shape = model.shapes[id];
    if (shape === undefined || id in shapes) return;
    shapes[id] = withoutDocumentation(shape) as SmithyShape;
    for (const member of Object.values(shape.members ?? {})) visit(member.target);
    for (const target of [shape.member, shape.input, shape.output, ...(shape.errors ?? [])])
      if (target !== undefined) visit(target.target);
  };
  visit(operation);
  const traits = model.shapes[service]?.traits ?? {};
  const serviceTraits = Object.fromEntries(
    Object.entries(traits).filter(
      ([key]) =>
        ['aws.api#service', 'aws.auth#sigv4', 'smithy.api#xmlNamespace'].includes(key) ||
        key.startsWith('aws.protocols#'),
    ),
  );
  return {
    serviceVersion: (model.shapes[service] as { version?: unknown } | undefined)?.version,
    serviceTraits,
    shapes,
  };
}

interface OpenApi {
  paths: Record<string, Record<string, Json>>;
  components: Record<string, Record<string, Json>>;
  servers?: Json;
}

/** An OpenAPI description's one operation (path, method) and the components it refers to, transitively; `cut` refs become `{}`. */
export function openApiOperationExcerpt(
  description: OpenApi,
  path: string,
  method: string,
  cut: readonly string[] = [],
): {
  servers: Json;
  path: string;
  method: string;
  operation: Json;
  components: Record<string, Record<string, Json>>;
  security: Json;
} {
  const components: Record<string, Record<string, Json>> = {};
  const follow = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(follow);
    if (typeof value !== 'object' || value === null) return value;
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (cut.includes(ref)) return { type: 'object' };
      const [, , kind = '', name = ''] = ref.split('/');
      if (!(components[kind] ?? {})[name]) {
        // Marked first, so a description that refers to itself ends.
        components[kind] = { ...components[kind], [name]: {} };
        const followed = follow(withoutDocumentation(description.components[kind]?.[name]));
        components[kind] = { ...components[kind], [name]: followed };
      }
      return value;
    }
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, follow(inner)]));
  };
  const operation = follow(withoutDocumentation(description.paths[path]?.[method]));
  const securitySchemes = description.components['securitySchemes'] ?? {};
  return {
    servers: description.servers,
    path,
    method,
    operation,
    components: {
      ...components,
      securitySchemes: withoutDocumentation(securitySchemes) as Record<string, Json>,
    },
    security: (description as { security?: Json }).security,
  };
}
