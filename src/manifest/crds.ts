// CustomResourceDefinitions for our kinds (rollgate.dev/v1alpha1), generated from the zod schemas.
import { z } from 'zod';
import { analysisRunSchema, analysisTemplateSchema, clusterAnalysisTemplateSchema } from './analysis.ts';
import { ARGO_API_GROUP, ROLLGATE_API_GROUP } from './api-version.ts';
import { experimentSchema } from './experiment.ts';
import { fleetSchema } from './fleet.ts';
import { gitSourceSchema } from './git-source.ts';
import { declaredRolloutSchema } from './rollout.ts';
import { toStructuralSchema, type SchemaNode } from './structural-schema.ts';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  jsonPath: string;
  description?: string;
  /** 1: shown by `kubectl get -o wide` only. */
  priority?: number;
}

interface CrdDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  schema: z.ZodType;
  columns: PrinterColumn[];
  /** Rollouts expose a scale subresource like Argo's, so an HPA can target them. */
  scale?: boolean;
  hasStatus: boolean;
  /** The schema's description (default: same spec as Argo Rollouts' kind). */
  description?: string;
  /** Rollgate's own kind, with no Argo Rollouts twin: never installed in argoproj.io. */
  rollgateOnly?: boolean;
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** The kinds we define, in file order; also the names of the files in deploy/crds/. */
export const CRD_DEFINITIONS: readonly CrdDefinition[] = [
  {
    kind: 'Rollout',
    plural: 'rollouts',
    singular: 'rollout',
    shortNames: ['ro'],
    scope: 'Namespaced',
    // As written: with workloadRef, template and selector are read from the Deployment.
    schema: declaredRolloutSchema,
    scale: true,
    hasStatus: true,
    columns: [
      { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Number of desired pods' },
      { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'Total number of pods' },
      {
        name: 'Up-to-date',
        type: 'integer',
        jsonPath: '.status.updatedReplicas',
        description: 'Pods on the newest template',
      },
      {
        name: 'Available',
        type: 'integer',
        jsonPath: '.status.availableReplicas',
        description: 'Available pods',
      },
      {
        name: 'Phase',
        type: 'string',
        jsonPath: '.status.phase',
        description: 'Healthy, Progressing, Paused or Degraded',
      },
      {
        name: 'Step',
        type: 'integer',
        jsonPath: '.status.currentStepIndex',
        description: 'Current canary step',
      },
      AGE,
    ],
  },
  {
    kind: 'AnalysisTemplate',
    plural: 'analysistemplates',
    singular: 'analysistemplate',
    shortNames: ['at'],
    scope: 'Namespaced',
    schema: analysisTemplateSchema,
    hasStatus: false,
    columns: [AGE],
  },
  {
    kind: 'ClusterAnalysisTemplate',
    plural: 'clusteranalysistemplates',
    singular: 'clusteranalysistemplate',
    shortNames: ['cat'],
    scope: 'Cluster',
    schema: clusterAnalysisTemplateSchema,
    hasStatus: false,
    columns: [AGE],
  },
  {
    kind: 'AnalysisRun',
    plural: 'analysisruns',
    singular: 'analysisrun',
    shortNames: ['ar'],
    scope: 'Namespaced',
    schema: analysisRunSchema,
    hasStatus: true,
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'AnalysisRun phase' },
      AGE,
    ],
  },
  {
    kind: 'Experiment',
    plural: 'experiments',
    singular: 'experiment',
    shortNames: ['exp'],
    scope: 'Namespaced',
    schema: experimentSchema,
    hasStatus: true,
    columns: [
      { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Experiment phase' },
      AGE,
    ],
  },
  {
    kind: 'GitSource',
    plural: 'gitsources',
    singular: 'gitsource',
    shortNames: ['gsrc'],
    scope: 'Namespaced',
    schema: gitSourceSchema,
    hasStatus: true,
    rollgateOnly: true,
    description: 'GitSource: a Git repository path Rollgate syncs into the cluster (docs/sources.md).',
    columns: [
      { name: 'URL', type: 'string', jsonPath: '.spec.url', description: 'Repository URL' },
      { name: 'Ref', type: 'string', jsonPath: '.status.ref', description: 'Branch followed' },
      {
        name: 'Commit',
        type: 'string',
        jsonPath: '.status.shortCommit',
        description: 'Last synced commit',
      },
      {
        name: 'Synced',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Synced")].status',
        description: 'The last sync reached the branch head',
      },
      {
        name: 'Healthy',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Healthy")].status',
        description: 'The objects it applied are healthy',
      },
      AGE,
      {
        name: 'Message',
        type: 'string',
        jsonPath: '.status.message',
        description: 'What the last attempt said',
        priority: 1,
      },
    ],
  },
  {
    kind: 'Fleet',
    plural: 'fleets',
    singular: 'fleet',
    shortNames: ['flt'],
    scope: 'Namespaced',
    schema: fleetSchema,
    hasStatus: true,
    rollgateOnly: true,
    description: 'Fleet: one Rollout walked across many clusters in waves (docs/fleets.md).',
    columns: [
      {
        name: 'Phase',
        type: 'string',
        jsonPath: '.status.phase',
        description: 'Progressing, Healthy, Waiting, Stopped or Invalid',
      },
      {
        name: 'Wave',
        type: 'integer',
        jsonPath: '.status.currentWave',
        description: 'Index of the wave being walked',
      },
      {
        name: 'Revision',
        type: 'string',
        jsonPath: '.status.shortRevision',
        description: 'The Git commit being walked',
      },
      AGE,
      {
        name: 'Message',
        type: 'string',
        jsonPath: '.status.message',
        description: 'Where the fleet is',
        priority: 1,
      },
    ],
  },
];

/**
 * Schemas already derived, per definition: deriving one (zod's JSON Schema, then the structural rewrite)
 * costs tens of milliseconds, and every start of a sandbox, test harness or `install` asks for all of
 * them again. Callers get their own copy, so one caller's edit never reaches another's CRD.
 */
const derivedSchemas = new Map<CrdDefinition, string>();

function openApiSchema(definition: CrdDefinition): SchemaNode {
  let derived = derivedSchemas.get(definition);
  if (derived === undefined) {
    derived = JSON.stringify(deriveOpenApiSchema(definition));
    derivedSchemas.set(definition, derived);
  }
  return JSON.parse(derived) as SchemaNode;
}

function deriveOpenApiSchema(definition: CrdDefinition): SchemaNode {
  const json = z.toJSONSchema(definition.schema, {
    target: 'openapi-3.0',
    unrepresentable: 'any',
    io: 'input',
  });
  const properties = (json as { properties?: Record<string, SchemaNode> }).properties ?? {};
  const spec = properties['spec'];
  if (spec === undefined) throw new Error(`schema of ${definition.kind} has no spec`);
  const schema: SchemaNode = {
    type: 'object',
    description:
      definition.description ??
      `${definition.kind}: same spec as Argo Rollouts' argoproj.io/v1alpha1 ${definition.kind}.`,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: toStructuralSchema(spec),
      // Status is written by Rollgate only; it carries rollgate-specific fields beside Argo's.
      ...(definition.hasStatus
        ? { status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }
        : {}),
    },
    required: ['spec'],
  };
  return schema;
}

/** The CRD name of a kind, e.g. `rollouts.rollgate.dev` (or `rollouts.argoproj.io` in Argo's group). */
export function crdName(
  definition: Pick<CrdDefinition, 'plural'>,
  group: string = ROLLGATE_API_GROUP,
): string {
  return `${definition.plural}.${group}`;
}

/**
 * The CustomResourceDefinition objects (apiextensions.k8s.io/v1) for Rollout, AnalysisTemplate,
 * ClusterAnalysisTemplate, AnalysisRun, Experiment, GitSource and Fleet in {@link ROLLGATE_API_GROUP}, ready to apply.
 */
export function rollgateCrds(): object[] {
  return crdsInGroup(ROLLGATE_API_GROUP);
}

/**
 * The same definitions in Argo Rollouts' group (`argoproj.io`), GitSource aside (Rollgate's own): what controller mode installs in a
 * cluster that has no Argo CRDs yet. Argo's own CRDs, where present, are never replaced by these
 * (see installCrdsWhenAbsent).
 */
export function argoCrds(): object[] {
  return crdsInGroup(ARGO_API_GROUP);
}

function crdsInGroup(group: string): object[] {
  const definitions = CRD_DEFINITIONS.filter(
    (definition) => group === ROLLGATE_API_GROUP || definition.rollgateOnly !== true,
  );
  return definitions.map((definition) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(definition, group), labels: { 'app.kubernetes.io/part-of': 'rollgate' } },
    spec: {
      group,
      names: {
        kind: definition.kind,
        listKind: `${definition.kind}List`,
        plural: definition.plural,
        singular: definition.singular,
        shortNames: definition.shortNames,
      },
      scope: definition.scope,
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          ...(definition.hasStatus || definition.scale === true
            ? {
                subresources: {
                  ...(definition.hasStatus ? { status: {} } : {}),
                  ...(definition.scale === true
                    ? {
                        scale: {
                          specReplicasPath: '.spec.replicas',
                          statusReplicasPath: '.status.HPAReplicas',
                          labelSelectorPath: '.status.selector',
                        },
                      }
                    : {}),
                },
              }
            : {}),
          additionalPrinterColumns: definition.columns,
          schema: { openAPIV3Schema: openApiSchema(definition) },
        },
      ],
    },
  }));
}
