// `rollgate create analysisrun`: read the template (cluster or file), build the run, create it, say its name.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { resolveNestedTemplates } from '../analysis/nested-templates.ts';
import { analysisRunFromTemplate } from '../analysis/run-from-template.ts';
import { toPlainObject, type KubeClients } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import {
  analysisTemplateSchema,
  clusterAnalysisTemplateSchema,
  type AnalysisTemplate,
  type ClusterAnalysisTemplate,
} from '../manifest/analysis.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import { AnalysisTemplateInvalidError } from './analysis-template-invalid-error.ts';
import { AnalysisTemplateNotFoundError } from './analysis-template-not-found-error.ts';
import type { CreateAnalysisRunRequest, TemplateSource } from './create-analysis-run-flags.ts';

type Template = AnalysisTemplate | ClusterAnalysisTemplate;

/** Parses a template object; the kind decides the schema (a file may hold either). */
function parseTemplate(object: unknown, source: string): Template {
  const kind = (object as { kind?: unknown } | null)?.kind;
  const schema = kind === 'ClusterAnalysisTemplate' ? clusterAnalysisTemplateSchema : analysisTemplateSchema;
  const parsed = schema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AnalysisTemplateInvalidError(
      source,
      issue?.path.map(String).join('.') ?? '',
      issue?.message ?? '',
    );
  }
  return parsed.data;
}

async function readTemplate(
  clients: KubeClients,
  source: TemplateSource,
  namespace: string,
  api: DrivenApi,
): Promise<Template> {
  if (source.kind === 'file') {
    const docs = parseAllDocuments(await readFile(source.path, 'utf8'));
    const first = docs.find((d) => d.contents !== null);
    if (first === undefined || first.errors.length > 0)
      throw new AnalysisTemplateInvalidError(
        source.path,
        '',
        first?.errors[0]?.message ?? 'the file holds no object',
      );
    const template = parseTemplate(first.toJS(), source.path);
    // --global says which kind the file must hold, as Argo's plugin reads it.
    const wanted = source.global ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate';
    if (template.kind !== wanted)
      throw new AnalysisTemplateInvalidError(
        source.path,
        'kind',
        `is ${template.kind}, expected ${wanted}${source.global ? '' : ' (or give --global)'}`,
      );
    return template;
  }
  const cluster = source.kind === 'ClusterAnalysisTemplate';
  const plural = cluster ? api.plurals.clusterAnalysisTemplates : api.plurals.analysisTemplates;
  try {
    const object = await kubeCall(
      { verb: 'get', kind: source.kind, name: source.name, ...(cluster ? {} : { namespace }) },
      () =>
        cluster
          ? clients.custom.getClusterCustomObject({
              group: api.group,
              version: api.version,
              plural,
              name: source.name,
            })
          : clients.custom.getNamespacedCustomObject({
              group: api.group,
              version: api.version,
              plural,
              namespace,
              name: source.name,
            }),
    );
    return parseTemplate(toPlainObject(object), `${source.kind}/${source.name}`);
  } catch (err) {
    if (isNotFound(err))
      throw new AnalysisTemplateNotFoundError(source.kind, source.name, cluster ? undefined : namespace);
    throw err;
  }
}

/**
 * Creates the AnalysisRun `request` asks for in `namespace` and returns its name (the API server's, when
 * generated). Nothing is created when the template is missing or invalid or an argument has no value.
 * @throws AnalysisTemplateNotFoundError (the template or one nested in it), AnalysisTemplateInvalidError,
 *   TemplateCycleError, MissingArgumentError, typed kube errors.
 */
export async function createAnalysisRun(
  clients: KubeClients,
  namespace: string,
  request: CreateAnalysisRunRequest,
  options: { api?: DrivenApi } = {},
): Promise<string> {
  const api = options.api ?? ROLLGATE_API;
  const template = await readTemplate(clients, request.template, namespace, api);
  // The templates its spec.templates names (and theirs), from the cluster; the template itself is the root.
  const rootRef = {
    templateName: template.metadata.name,
    clusterScope: template.kind === 'ClusterAnalysisTemplate',
  };
  const [, ...nested] = await resolveNestedTemplates([rootRef], async (ref) =>
    ref.templateName === rootRef.templateName && (ref.clusterScope === true) === rootRef.clusterScope
      ? template
      : readTemplate(
          clients,
          {
            kind: ref.clusterScope === true ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate',
            name: ref.templateName,
          },
          namespace,
          api,
        ),
  );
  const run = analysisRunFromTemplate(
    template,
    request.args,
    { namespace, apiGroup: api.group, ...(request.naming && { naming: request.naming }) },
    nested,
  );
  const created = toPlainObject<{ metadata?: { name?: string } }>(
    await kubeCall({ verb: 'create', kind: 'AnalysisRun', namespace }, () =>
      clients.custom.createNamespacedCustomObject({
        group: api.group,
        version: api.version,
        namespace,
        plural: api.plurals.analysisRuns,
        body: run,
      }),
    ),
  );
  return created.metadata?.name ?? '';
}
