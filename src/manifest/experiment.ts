// The Experiment kind: zod schemas and types, field for field as Argo Rollouts' argoproj.io/v1alpha1.
import { z } from 'zod';
import { ACCEPTED_API_VERSIONS } from './api-version.ts';
import { ANALYSIS_PHASES, argumentSchema } from './analysis.ts';
import { labelSelectorSchema, objectMetaSchema, podMetadataSchema, podTemplateSchema } from './kube-meta.ts';
import { durationValueSchema, dryRunSchema, measurementRetentionSchema } from './rollout.ts';

const nonNegativeInt = z.int().min(0, { error: (iss) => `must be >= 0, got ${String(iss.input)}` });

/** What Argo assumes when a field is left out (its utils/defaults for Experiments). */
export const EXPERIMENT_DEFAULTS = {
  replicas: 1,
  progressDeadlineSeconds: 600,
  scaleDownDelaySeconds: 30,
} as const;

/** The annotations Argo stamps on a template's ReplicaSet: which Experiment and which template it runs. */
export const EXPERIMENT_NAME_ANNOTATION = 'experiment.argoproj.io/name';
export const EXPERIMENT_TEMPLATE_NAME_ANNOTATION = 'experiment.argoproj.io/template-name';

/** `spec.templates[].service`: a Service in front of the template's pods (named after the ReplicaSet unless named). */
export const templateServiceSchema = z.object({ name: z.string().optional() });

/** One `spec.templates[]`: a pod template run as a ReplicaSet for the experiment's life. */
export const experimentTemplateSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  replicas: nonNegativeInt.optional(),
  minReadySeconds: nonNegativeInt.optional(),
  selector: labelSelectorSchema,
  template: podTemplateSchema,
  service: templateServiceSchema.optional(),
});
export type ExperimentTemplate = z.infer<typeof experimentTemplateSchema>;

/** One `spec.analyses[]`: an AnalysisRun made from a template once every template is available. */
export const experimentAnalysisSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  templateName: z.string().min(1, { error: 'must not be empty' }),
  clusterScope: z.boolean().optional(),
  args: z.array(argumentSchema).optional(),
  requiredForCompletion: z.boolean().optional(),
});
export type ExperimentAnalysis = z.infer<typeof experimentAnalysisSchema>;

export const experimentSpecSchema = z.object({
  templates: z.array(experimentTemplateSchema).min(1, { error: 'at least one template is required' }),
  duration: durationValueSchema.optional(),
  progressDeadlineSeconds: z.int().min(1, { error: 'must be > 0' }).optional(),
  terminate: z.boolean().optional(),
  analyses: z.array(experimentAnalysisSchema).optional(),
  scaleDownDelaySeconds: nonNegativeInt.optional(),
  dryRun: z.array(dryRunSchema).optional(),
  measurementRetention: z.array(measurementRetentionSchema).optional(),
  analysisRunMetadata: podMetadataSchema.optional(),
});
export type ExperimentSpec = z.infer<typeof experimentSpecSchema>;

// ---------------------------------------------------------------------------------------------------
// Status, as Argo writes it

/** A template's state: Progressing until its pods are available, Running, then one of the completed three. */
export const TEMPLATE_STATUS_CODES = ['Progressing', 'Running', 'Successful', 'Failed', 'Error'] as const;
export type TemplateStatusCode = (typeof TEMPLATE_STATUS_CODES)[number];

export const templateStatusSchema = z.looseObject({
  name: z.string(),
  replicas: z.int(),
  updatedReplicas: z.int(),
  readyReplicas: z.int(),
  availableReplicas: z.int(),
  collisionCount: z.int().optional(),
  status: z.enum(TEMPLATE_STATUS_CODES).optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  serviceName: z.string().optional(),
  podTemplateHash: z.string().optional(),
});
export type TemplateStatus = z.infer<typeof templateStatusSchema>;

export const experimentAnalysisRunStatusSchema = z.looseObject({
  name: z.string(),
  analysisRun: z.string(),
  phase: z.union([z.enum(ANALYSIS_PHASES), z.literal('')]),
  message: z.string().optional(),
});
export type ExperimentAnalysisRunStatus = z.infer<typeof experimentAnalysisRunStatusSchema>;

export const experimentConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  lastUpdateTime: z.string(),
  lastTransitionTime: z.string(),
  reason: z.string(),
  message: z.string(),
});
export type ExperimentCondition = z.infer<typeof experimentConditionSchema>;

/** An Experiment's phase is an analysis phase (Pending, Running, then Successful/Failed/Error/Inconclusive). */
export const experimentStatusSchema = z.looseObject({
  phase: z.enum(ANALYSIS_PHASES).optional(),
  message: z.string().optional(),
  templateStatuses: z.array(templateStatusSchema).optional(),
  availableAt: z.string().optional(),
  conditions: z.array(experimentConditionSchema).optional(),
  analysisRuns: z.array(experimentAnalysisRunStatusSchema).optional(),
});
export type ExperimentStatus = z.infer<typeof experimentStatusSchema>;

const apiVersionSchema = z.enum(ACCEPTED_API_VERSIONS, {
  error: (iss) => `must be one of ${ACCEPTED_API_VERSIONS.join(', ')}, got ${JSON.stringify(iss.input)}`,
});

export const experimentSchema = z.object({
  apiVersion: apiVersionSchema,
  kind: z.literal('Experiment'),
  metadata: objectMetaSchema,
  spec: experimentSpecSchema,
  status: experimentStatusSchema.optional(),
});
export type Experiment = z.infer<typeof experimentSchema>;
