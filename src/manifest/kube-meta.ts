// Schemas for the Kubernetes building blocks our kinds embed: metadata, selectors, int-or-string, pod templates.
import { z } from 'zod';

/** Kubernetes `IntOrString`: an integer or a string (a percentage like "25%" or a template like "{{args.n}}"). */
export const intOrStringSchema = z.union([z.int(), z.string()]);
export type IntOrString = z.infer<typeof intOrStringSchema>;

/** A resource quantity as YAML carries it ("500m", "128Mi", 2); its syntax is checked by validation. */
export const quantityValueSchema = z.union([z.number(), z.string()]);

const stringMap = z.record(z.string(), z.string());

/** ObjectMeta as written in manifests; fields we do not read are kept as they are. */
export const objectMetaSchema = z.looseObject({
  name: z.string().min(1, { error: 'must not be empty' }),
  namespace: z.string().min(1, { error: 'must not be empty' }).optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().optional(),
});
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/**
 * ObjectMeta of an object that may be created under a generated name (an AnalysisRun written as Argo's
 * examples do): `name`, or `generateName`, a prefix the API server completes with 5 random characters.
 * Neither is `metadata.name: required`.
 */
export const generatableObjectMetaSchema = objectMetaSchema
  .extend({
    name: z.string().min(1, { error: 'must not be empty' }).optional(),
    generateName: z.string().min(1, { error: 'must not be empty' }).optional(),
  })
  .superRefine((meta, ctx) => {
    if (meta.name === undefined && meta.generateName === undefined)
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'required', input: undefined });
  });

/** Labels and annotations applied to a ReplicaSet's pods (canaryMetadata, stableMetadata, …). */
export const podMetadataSchema = z.object({
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
});
export type PodMetadata = z.infer<typeof podMetadataSchema>;

export const labelSelectorRequirementSchema = z.object({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});

/** metav1.LabelSelector. */
export const labelSelectorSchema = z.object({
  matchLabels: stringMap.optional(),
  matchExpressions: z.array(labelSelectorRequirementSchema).optional(),
});
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

export const resourceRequirementsSchema = z.looseObject({
  limits: z.record(z.string(), quantityValueSchema).optional(),
  requests: z.record(z.string(), quantityValueSchema).optional(),
});

/** A container, checked for the parts Rollgate reads; the rest is kept loose. */
export const containerSchema = z.looseObject({
  name: z.string().min(1, { error: 'must not be empty' }),
  image: z.string().min(1, { error: 'must not be empty' }),
  resources: resourceRequirementsSchema.optional(),
});
export type Container = z.infer<typeof containerSchema>;

/** corev1.PodTemplateSpec: labels and containers are checked, everything else passes through. */
export const podTemplateSchema = z.looseObject({
  metadata: z
    .looseObject({
      labels: stringMap.optional(),
      annotations: stringMap.optional(),
    })
    .optional(),
  spec: z.looseObject({
    containers: z.array(containerSchema).min(1, { error: 'at least one container is required' }),
    initContainers: z.array(containerSchema).optional(),
  }),
});
export type PodTemplate = z.infer<typeof podTemplateSchema>;

/** A loose object: any map, kept as written (used for parts we pass through without reading). */
export const looseMapSchema = z.record(z.string(), z.unknown());
