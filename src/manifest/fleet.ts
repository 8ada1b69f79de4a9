// The Fleet custom resource (rollgate.dev/v1alpha1): one Rollout walked across many clusters in waves.
import { z } from 'zod';
import { objectMetaSchema } from './kube-meta.ts';
import { durationValueSchema } from './rollout.ts';

/** The kind and its plural. */
export const FLEET_KIND = 'Fleet';
export const FLEET_PLURAL = 'fleets';

/**
 * `<wave name>@<revision>` on the Fleet approves that wave for that Git commit, and nothing else. Written in
 * Git when the Fleet is applied by a source, so approving a wave is a Git commit, like a step's
 * `rollgate.dev/approve` on a Rollout.
 */
export const APPROVE_WAVE_ANNOTATION = 'rollgate.dev/approve-wave';

const nonEmpty = z.string().min(1, { error: 'must not be empty' });

/** One wave: an explicit list of clusters, a percent of the clusters no earlier wave took, or the rest. */
export const fleetWaveSchema = z
  .object({
    name: nonEmpty,
    clusters: z.array(nonEmpty).optional(),
    /** Of the fleet's clusters not in an earlier wave, rounded up, in stable order by name. */
    percent: z
      .int()
      .min(1, { error: (iss) => `must be 1..100, got ${String(iss.input)}` })
      .max(100, { error: (iss) => `must be 1..100, got ${String(iss.input)}` })
      .optional(),
    rest: z.boolean().optional(),
  })
  .strict();
export type FleetWave = z.infer<typeof fleetWaveSchema>;

export const fleetSpecSchema = z
  .object({
    rollout: z
      .object({
        /** The file in the sources' repository (repository-relative) that holds the Rollout. */
        path: nonEmpty,
        /** The Rollout's metadata.name; optional when the file holds exactly one Rollout. */
        name: nonEmpty.optional(),
      })
      .strict(),
    /** Default: every cluster whose source carries `rollout.path`. */
    clusters: z.array(nonEmpty).optional(),
    waves: z.array(fleetWaveSchema).min(1, { error: 'at least one wave is required' }),
    gates: z
      .object({
        /** How long a wave stays Healthy before the next opens ("10m", or whole seconds). */
        soak: durationValueSchema.optional(),
        /** The next wave opens only with `rollgate.dev/approve-wave: <next wave>@<revision>` on the Fleet. */
        approval: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** A step barrier across a wave's clusters (documented in docs/fleets.md: not built yet). */
    lockstep: z.boolean().optional(),
  })
  .strict();
export type FleetSpec = z.infer<typeof fleetSpecSchema>;

/** The whole object as validated and as the CRD is generated from it (status is Rollgate's, kept open). */
export const fleetSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: fleetSpecSchema,
});
export type FleetObject = z.infer<typeof fleetSchema>;
