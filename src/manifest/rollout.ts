// The Rollout kind: zod schemas and derived types, field for field as Argo Rollouts' argoproj.io/v1alpha1.
import { z } from 'zod';
import { ACCEPTED_API_VERSIONS } from './api-version.ts';
import {
  intOrStringSchema,
  labelSelectorSchema,
  looseMapSchema,
  objectMetaSchema,
  podMetadataSchema,
  podTemplateSchema,
} from './kube-meta.ts';

export {
  ROLLGATE_API_VERSION,
  ARGO_API_VERSION,
  ROLLGATE_API_GROUP,
  ACCEPTED_API_VERSIONS,
  toRollgateApiVersion,
} from './api-version.ts';

/** A duration as Argo writes it: a Go-style string ("30s", "1h30m") or integer seconds. Parsed by `parseDuration`. */
export const durationValueSchema = z.union([z.int(), z.string()]);

const nonNegativeInt = z.int().min(0, { error: (iss) => `must be >= 0, got ${String(iss.input)}` });

// ---------------------------------------------------------------------------------------------------
// Analysis references (used by steps and background analysis)

export const analysisTemplateRefSchema = z.object({
  templateName: z.string().min(1, { error: 'must not be empty' }),
  clusterScope: z.boolean().optional(),
});
export type AnalysisTemplateRef = z.infer<typeof analysisTemplateRefSchema>;

/** An argument passed from a Rollout to an analysis: a literal value or one read from the pod/ReplicaSet. */
export const analysisRunArgumentSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  value: z.string().optional(),
  valueFrom: z
    .object({
      podTemplateHashValue: z.enum(['Stable', 'Latest']).optional(),
      fieldRef: z.object({ fieldPath: z.string() }).optional(),
    })
    .optional(),
});
export type AnalysisRunArgument = z.infer<typeof analysisRunArgumentSchema>;

export const dryRunSchema = z.object({ metricName: z.string() });
export const measurementRetentionSchema = z.object({ metricName: z.string(), limit: z.int() });

/** An analysis step / background analysis: which templates to run with which args. */
export const rolloutAnalysisSchema = z.object({
  templates: z.array(analysisTemplateRefSchema).optional(),
  args: z.array(analysisRunArgumentSchema).optional(),
  dryRun: z.array(dryRunSchema).optional(),
  measurementRetention: z.array(measurementRetentionSchema).optional(),
  analysisRunMetadata: podMetadataSchema.optional(),
});
export type RolloutAnalysis = z.infer<typeof rolloutAnalysisSchema>;

/** `strategy.canary.analysis`: background analysis, started at `startingStep` (default 0). */
export const rolloutAnalysisBackgroundSchema = rolloutAnalysisSchema.extend({
  startingStep: nonNegativeInt.optional(),
});
export type RolloutAnalysisBackground = z.infer<typeof rolloutAnalysisBackgroundSchema>;

// ---------------------------------------------------------------------------------------------------
// Canary steps

const weightPercent = z
  .int({ error: 'must be an integer percentage' })
  .min(0, {
    error: (iss) => `must be between 0 and 100, got ${String(iss.input)}`,
  })
  .max(100, { error: (iss) => `must be between 0 and 100, got ${String(iss.input)}` });

/**
 * A traffic weight, in units of trafficRouting.maxTrafficWeight (100 unless set): its upper bound
 * depends on that field, so it is checked with the Rollout (rollout-checks.ts), not here.
 */
const trafficWeight = z.int({ error: 'must be an integer weight' }).min(0, {
  error: (iss) => `must be at least 0, got ${String(iss.input)}`,
});

export const rolloutPauseSchema = z.object({ duration: durationValueSchema.optional() });
export type RolloutPause = z.infer<typeof rolloutPauseSchema>;

export const setCanaryScaleSchema = z.object({
  weight: weightPercent.optional(),
  replicas: nonNegativeInt.optional(),
  matchTrafficWeight: z.boolean().optional(),
});
export type SetCanaryScale = z.infer<typeof setCanaryScaleSchema>;

export const stringMatchSchema = z.object({
  exact: z.string().optional(),
  prefix: z.string().optional(),
  regex: z.string().optional(),
});

export const setHeaderRouteSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  match: z.array(z.object({ headerName: z.string(), headerValue: stringMatchSchema })).optional(),
});
export type SetHeaderRoute = z.infer<typeof setHeaderRouteSchema>;

export const setMirrorRouteSchema = z.object({
  name: z.string().min(1, { error: 'must not be empty' }),
  match: z
    .array(
      z.object({
        method: stringMatchSchema.optional(),
        path: stringMatchSchema.optional(),
        headers: z.record(z.string(), stringMatchSchema).optional(),
      }),
    )
    .optional(),
  percentage: weightPercent.optional(),
});
export type SetMirrorRoute = z.infer<typeof setMirrorRouteSchema>;

/** An inline experiment step: parsed so it can be reported (Rollgate does not run experiments). */
export const rolloutExperimentStepSchema = z.object({
  duration: durationValueSchema.optional(),
  templates: z.array(
    z.looseObject({
      name: z.string(),
      specRef: z.string(),
      replicas: nonNegativeInt.optional(),
      weight: z.int().optional(),
    }),
  ),
  analyses: z
    .array(
      z.looseObject({
        name: z.string(),
        templateName: z.string(),
        clusterScope: z.boolean().optional(),
        args: z.array(analysisRunArgumentSchema).optional(),
        requiredForCompletion: z.boolean().optional(),
      }),
    )
    .optional(),
  dryRun: z.array(dryRunSchema).optional(),
  measurementRetention: z.array(measurementRetentionSchema).optional(),
});

export const rolloutPluginStepSchema = z.object({
  name: z.string(),
  config: looseMapSchema.optional(),
});

/** The kinds of canary step; exactly one field of a {@link CanaryStep} is set. */
export const CANARY_STEP_KINDS = [
  'setWeight',
  'pause',
  'setCanaryScale',
  'analysis',
  'experiment',
  'setHeaderRoute',
  'setMirrorRoute',
  'plugin',
] as const;
export type CanaryStepKind = (typeof CANARY_STEP_KINDS)[number];

/** Step kinds that are mutually exclusive within one step (Argo allows e.g. setCanaryScale with setHeaderRoute). */
export const EXCLUSIVE_STEP_KINDS = ['setWeight', 'pause', 'experiment', 'analysis'] as const;

/**
 * One canary step. As in Argo, a step is an object with its kind's field set: at most one of
 * setWeight, pause, experiment and analysis; the route and scale fields may accompany each other. Use
 * {@link canaryStepKind} / {@link canaryStepKinds} to tell what a step does.
 */
export const canaryStepSchema = z
  .object({
    setWeight: trafficWeight.optional(),
    pause: rolloutPauseSchema.optional(),
    setCanaryScale: setCanaryScaleSchema.optional(),
    analysis: rolloutAnalysisSchema.optional(),
    experiment: rolloutExperimentStepSchema.optional(),
    setHeaderRoute: setHeaderRouteSchema.optional(),
    setMirrorRoute: setMirrorRouteSchema.optional(),
    plugin: rolloutPluginStepSchema.optional(),
  })
  .superRefine((step, ctx) => {
    const set = CANARY_STEP_KINDS.filter((kind) => step[kind] !== undefined);
    const exclusive = EXCLUSIVE_STEP_KINDS.filter((kind) => step[kind] !== undefined);
    if (set.length === 0) {
      ctx.addIssue({ code: 'custom', message: `a step must set one of ${CANARY_STEP_KINDS.join(', ')}` });
    } else if (exclusive.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a step must set only one of ${EXCLUSIVE_STEP_KINDS.join(', ')}, got ${exclusive.join(' and ')}`,
      });
    }
  });
export type CanaryStep = z.infer<typeof canaryStepSchema>;

/** Every kind a step sets, in {@link CANARY_STEP_KINDS} order (usually one). */
export function canaryStepKinds(step: CanaryStep): CanaryStepKind[] {
  return CANARY_STEP_KINDS.filter((kind) => step[kind] !== undefined);
}

/** The step's main kind: the first field set, in {@link CANARY_STEP_KINDS} order. */
export function canaryStepKind(step: CanaryStep): CanaryStepKind | undefined {
  return CANARY_STEP_KINDS.find((kind) => step[kind] !== undefined);
}

// ---------------------------------------------------------------------------------------------------
// Traffic routing: every provider Argo knows, kept loose (Rollgate reads only what its routers need)

export const TRAFFIC_ROUTING_PROVIDERS = [
  'gatewayAPI',
  'istio',
  'nginx',
  'alb',
  'smi',
  'ambassador',
  'appMesh',
  'traefik',
  'apisix',
  'plugins',
] as const;

export const trafficRoutingSchema = z.object({
  /** Rollgate's own name for the Gateway API router (the fields of Argo's `argoproj-labs/gatewayAPI` plugin). */
  gatewayAPI: looseMapSchema.optional(),
  istio: looseMapSchema.optional(),
  nginx: looseMapSchema.optional(),
  alb: looseMapSchema.optional(),
  smi: looseMapSchema.optional(),
  ambassador: looseMapSchema.optional(),
  appMesh: looseMapSchema.optional(),
  traefik: looseMapSchema.optional(),
  apisix: looseMapSchema.optional(),
  plugins: looseMapSchema.optional(),
  managedRoutes: z.array(z.object({ name: z.string() })).optional(),
  maxTrafficWeight: z.int().min(1).optional(),
});
export type TrafficRouting = z.infer<typeof trafficRoutingSchema>;

// ---------------------------------------------------------------------------------------------------
// Strategies

/** `antiAffinity` of either strategy: exactly one of preferred (with a weight 1–100) and required (checked in rollout-checks). */
export const antiAffinitySchema = z.object({
  preferredDuringSchedulingIgnoredDuringExecution: z.object({ weight: z.int() }).optional(),
  requiredDuringSchedulingIgnoredDuringExecution: z.object({}).optional(),
});
export type AntiAffinity = z.infer<typeof antiAffinitySchema>;

/**
 * The kinds of `canary.replicaProgressThreshold.type`: a percentage of the pods a step wants, or a number of
 * pods (Argo's documentation writes `Pod`, its code `Pods`: both are read as a number of pods).
 */
export const REPLICA_PROGRESS_TYPES = ['Percent', 'Pod', 'Pods'] as const;

/** `canary.replicaProgressThreshold`: how many of the canary's pods must be available for a step to count as done. */
export const replicaProgressThresholdSchema = z.object({
  type: z.enum(REPLICA_PROGRESS_TYPES),
  value: z.int().min(1, { error: (iss) => `must be > 0, got ${String(iss.input)}` }),
});
export type ReplicaProgressThreshold = z.infer<typeof replicaProgressThresholdSchema>;

export const canaryStrategySchema = z.object({
  canaryService: z.string().optional(),
  stableService: z.string().optional(),
  steps: z.array(canaryStepSchema).optional(),
  trafficRouting: trafficRoutingSchema.optional(),
  maxUnavailable: intOrStringSchema.optional(),
  maxSurge: intOrStringSchema.optional(),
  analysis: rolloutAnalysisBackgroundSchema.optional(),
  antiAffinity: antiAffinitySchema.optional(),
  canaryMetadata: podMetadataSchema.optional(),
  stableMetadata: podMetadataSchema.optional(),
  scaleDownDelaySeconds: nonNegativeInt.optional(),
  scaleDownDelayRevisionLimit: nonNegativeInt.optional(),
  abortScaleDownDelaySeconds: nonNegativeInt.optional(),
  dynamicStableScale: z.boolean().optional(),
  pingPong: z.object({ pingService: z.string(), pongService: z.string() }).optional(),
  minPodsPerReplicaSet: nonNegativeInt.optional(),
  replicaProgressThreshold: replicaProgressThresholdSchema.optional(),
});
export type CanaryStrategy = z.infer<typeof canaryStrategySchema>;

/** `strategy.blueGreen`, field for field as Argo (defaults in {@link ROLLOUT_DEFAULTS}.blueGreen). */
export const blueGreenStrategySchema = z.object({
  activeService: z.string({ error: 'is required' }).min(1, { error: 'must not be empty' }),
  previewService: z.string().min(1, { error: 'must not be empty' }).optional(),
  previewReplicaCount: nonNegativeInt.optional(),
  autoPromotionEnabled: z.boolean().optional(),
  autoPromotionSeconds: nonNegativeInt.optional(),
  maxUnavailable: intOrStringSchema.optional(),
  scaleDownDelaySeconds: nonNegativeInt.optional(),
  scaleDownDelayRevisionLimit: nonNegativeInt.optional(),
  abortScaleDownDelaySeconds: nonNegativeInt.optional(),
  prePromotionAnalysis: rolloutAnalysisSchema.optional(),
  postPromotionAnalysis: rolloutAnalysisSchema.optional(),
  antiAffinity: antiAffinitySchema.optional(),
  previewMetadata: podMetadataSchema.optional(),
  activeMetadata: podMetadataSchema.optional(),
});
export type BlueGreenStrategy = z.infer<typeof blueGreenStrategySchema>;

export const rolloutStrategySchema = z.object({
  canary: canaryStrategySchema.optional(),
  blueGreen: blueGreenStrategySchema.optional(),
});
export type RolloutStrategy = z.infer<typeof rolloutStrategySchema>;

/** What happens to the referenced Deployment (Argo's values; absent means `never`). */
export const WORKLOAD_SCALE_DOWN_MODES = ['never', 'onsuccess', 'progressively'] as const;
export type WorkloadScaleDown = (typeof WORKLOAD_SCALE_DOWN_MODES)[number];

/**
 * `spec.workloadRef`: the pod template (and, when the Rollout has none, the selector) is read from this
 * Deployment in the Rollout's namespace. Only apps/v1 Deployment is driven; rollout-checks.ts says so.
 */
export const workloadRefSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string().min(1, { error: 'must not be empty' }),
  scaleDown: z.enum(WORKLOAD_SCALE_DOWN_MODES).optional(),
});
export type WorkloadRef = z.infer<typeof workloadRefSchema>;

export const rolloutSpecSchema = z.object({
  replicas: nonNegativeInt.optional(),
  selector: labelSelectorSchema,
  template: podTemplateSchema,
  workloadRef: workloadRefSchema.optional(),
  minReadySeconds: nonNegativeInt.optional(),
  revisionHistoryLimit: nonNegativeInt.optional(),
  paused: z.boolean().optional(),
  progressDeadlineSeconds: z.int().min(1, { error: 'must be > 0' }).optional(),
  progressDeadlineAbort: z.boolean().optional(),
  restartAt: z.string().optional(),
  strategy: rolloutStrategySchema,
  rollbackWindow: z.object({ revisions: nonNegativeInt.optional() }).optional(),
  analysis: z
    .object({
      successfulRunHistoryLimit: nonNegativeInt.optional(),
      unsuccessfulRunHistoryLimit: nonNegativeInt.optional(),
    })
    .optional(),
});
export type RolloutSpec = z.infer<typeof rolloutSpecSchema>;

/**
 * The spec as written in Git and stored in the cluster: with `workloadRef`, `template` (and `selector`)
 * may be absent, because they are read from the Deployment. The planner never sees this shape: the
 * observed-state reader resolves it into a {@link RolloutSpec} first.
 */
export const declaredRolloutSpecSchema = rolloutSpecSchema.extend({
  selector: labelSelectorSchema.optional(),
  template: podTemplateSchema.optional(),
});
export type DeclaredRolloutSpec = z.infer<typeof declaredRolloutSpecSchema>;

// ---------------------------------------------------------------------------------------------------
// Status

export const ROLLOUT_PHASES = ['Healthy', 'Progressing', 'Paused', 'Degraded'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

/** Why a rollout is paused, and since when (the timer's absolute start). */
export const pauseConditionSchema = z.looseObject({
  /** Argo's reasons: CanaryPauseStep, BlueGreenPause, AnalysisRunInconclusive, InconclusiveExperiment, … */
  reason: z.string(),
  startTime: z.string(),
});
export type PauseCondition = z.infer<typeof pauseConditionSchema>;

export const rolloutConditionSchema = z.looseObject({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  lastUpdateTime: z.string().optional(),
});
export type RolloutCondition = z.infer<typeof rolloutConditionSchema>;

export const trafficWeightDestinationSchema = z.looseObject({
  weight: z.number(),
  serviceName: z.string().optional(),
  podTemplateHash: z.string().optional(),
});
export type TrafficWeightDestination = z.infer<typeof trafficWeightDestinationSchema>;

export const rolloutAnalysisRunStatusSchema = z.looseObject({
  name: z.string(),
  status: z.string().optional(),
  message: z.string().optional(),
});

export const canaryStatusSchema = z.looseObject({
  currentStepAnalysisRunStatus: rolloutAnalysisRunStatusSchema.optional(),
  currentBackgroundAnalysisRunStatus: rolloutAnalysisRunStatusSchema.optional(),
  currentExperiment: z.string().optional(),
  weights: z
    .looseObject({
      canary: trafficWeightDestinationSchema,
      stable: trafficWeightDestinationSchema,
      additional: z.array(trafficWeightDestinationSchema).optional(),
      verified: z.boolean().optional(),
    })
    .optional(),
  stablePingPong: z.string().optional(),
});

/**
 * Rollout status: the fields Argo has; unknown extra fields (rollgate-specific ones written by the
 * planner) are kept, here and in the CRD (x-kubernetes-preserve-unknown-fields).
 */
export const rolloutStatusSchema = z.looseObject({
  phase: z.enum(ROLLOUT_PHASES).optional(),
  message: z.string().optional(),
  currentStepIndex: z.int().optional(),
  currentStepHash: z.string().optional(),
  currentPodHash: z.string().optional(),
  stableRS: z.string().optional(),
  pauseConditions: z.array(pauseConditionSchema).optional(),
  controllerPause: z.boolean().optional(),
  abort: z.boolean().optional(),
  abortedAt: z.string().optional(),
  promoteFull: z.boolean().optional(),
  restartedAt: z.string().optional(),
  canary: canaryStatusSchema.optional(),
  blueGreen: looseMapSchema.optional(),
  replicas: z.int().optional(),
  updatedReplicas: z.int().optional(),
  readyReplicas: z.int().optional(),
  availableReplicas: z.int().optional(),
  HPAReplicas: z.int().optional(),
  selector: z.string().optional(),
  collisionCount: z.int().optional(),
  /** A string in Argo (its generation as decimal text); an integer is accepted too. */
  observedGeneration: z.union([z.string(), z.int()]).optional(),
  workloadObservedGeneration: z.string().optional(),
  conditions: z.array(rolloutConditionSchema).optional(),
});
export type RolloutStatus = z.infer<typeof rolloutStatusSchema>;

// ---------------------------------------------------------------------------------------------------
// The object

export const rolloutSchema = z.object({
  apiVersion: z.enum(ACCEPTED_API_VERSIONS, {
    error: (iss) => `must be one of ${ACCEPTED_API_VERSIONS.join(', ')}, got ${JSON.stringify(iss.input)}`,
  }),
  kind: z.literal('Rollout'),
  metadata: objectMetaSchema,
  spec: rolloutSpecSchema,
  status: rolloutStatusSchema.optional(),
});
export type Rollout = z.infer<typeof rolloutSchema>;

/** A Rollout as written (template and selector optional with workloadRef): what validate and the CRD accept. */
export const declaredRolloutSchema = rolloutSchema.extend({ spec: declaredRolloutSpecSchema });
export type DeclaredRollout = z.infer<typeof declaredRolloutSchema>;

// ---------------------------------------------------------------------------------------------------
// Defaults: the one source of truth for values Argo fills in when a field is absent

/** Argo's documented defaults for Rollout fields Rollgate acts on. */
export const ROLLOUT_DEFAULTS = {
  replicas: 1,
  minReadySeconds: 0,
  revisionHistoryLimit: 10,
  progressDeadlineSeconds: 600,
  progressDeadlineAbort: false,
  paused: false,
  workloadRef: { scaleDown: 'never' as WorkloadScaleDown },
  canary: {
    maxSurge: '25%',
    maxUnavailable: '25%',
    /**
     * How long the old stable keeps its pods after a completion, and an aborted canary after an abort, when
     * a traffic router splits the traffic (the router may still send requests to them for a moment).
     * Without a router (replica ratio) both default to 0, as in Argo: every pod behind the one Service
     * serves, so an old stable kept running would keep serving the old version.
     */
    scaleDownDelaySeconds: 30,
    abortScaleDownDelaySeconds: 30,
    /** The defaults of both delays without a traffic router (and of scaleDownDelaySeconds with dynamicStableScale). */
    scaleDownDelaySecondsWithoutRouter: 0,
    dynamicStableScale: false,
    backgroundAnalysisStartingStep: 0,
  },
  blueGreen: {
    autoPromotionEnabled: true,
    /** 0: no timed pause (promotion as soon as the gates pass). */
    autoPromotionSeconds: 0,
    /** How long the previous active ReplicaSet keeps its pods after the switch (clients may still hold connections). */
    scaleDownDelaySeconds: 30,
    /** How long an aborted preview keeps its pods. */
    abortScaleDownDelaySeconds: 30,
  },
} as const;

/** A blue-green strategy whose defaulted fields are always present. */
export type BlueGreenStrategyWithDefaults = BlueGreenStrategy &
  Required<
    Pick<
      BlueGreenStrategy,
      'autoPromotionEnabled' | 'autoPromotionSeconds' | 'scaleDownDelaySeconds' | 'abortScaleDownDelaySeconds'
    >
  >;

/** `strategy.blueGreen` with Argo's defaults ({@link ROLLOUT_DEFAULTS}.blueGreen) filled in where absent. */
export function blueGreenWithDefaults(blueGreen: BlueGreenStrategy): BlueGreenStrategyWithDefaults {
  const d = ROLLOUT_DEFAULTS.blueGreen;
  return {
    ...blueGreen,
    autoPromotionEnabled: blueGreen.autoPromotionEnabled ?? d.autoPromotionEnabled,
    autoPromotionSeconds: blueGreen.autoPromotionSeconds ?? d.autoPromotionSeconds,
    scaleDownDelaySeconds: blueGreen.scaleDownDelaySeconds ?? d.scaleDownDelaySeconds,
    abortScaleDownDelaySeconds: blueGreen.abortScaleDownDelaySeconds ?? d.abortScaleDownDelaySeconds,
  };
}

/** A canary strategy whose defaulted fields are always present. */
export type CanaryStrategyWithDefaults = CanaryStrategy &
  Required<
    Pick<
      CanaryStrategy,
      | 'maxSurge'
      | 'maxUnavailable'
      | 'scaleDownDelaySeconds'
      | 'abortScaleDownDelaySeconds'
      | 'dynamicStableScale'
    >
  > & { steps: CanaryStep[] };

/** A Rollout spec whose defaulted fields are always present. */
export type RolloutSpecWithDefaults = Omit<RolloutSpec, 'strategy'> &
  Required<
    Pick<
      RolloutSpec,
      | 'replicas'
      | 'minReadySeconds'
      | 'revisionHistoryLimit'
      | 'progressDeadlineSeconds'
      | 'progressDeadlineAbort'
      | 'paused'
    >
  > & { strategy: Omit<RolloutStrategy, 'canary'> & { canary?: CanaryStrategyWithDefaults } };

/**
 * Returns a copy of the spec with Argo's defaults ({@link ROLLOUT_DEFAULTS}) filled in where a field is
 * absent; fields that are set are kept. `strategy.canary` gets defaults only when it is present.
 */
export function withDefaults(spec: RolloutSpec): RolloutSpecWithDefaults {
  const { canary, ...otherStrategies } = spec.strategy;
  const d = ROLLOUT_DEFAULTS;
  const strategy: RolloutSpecWithDefaults['strategy'] = { ...otherStrategies };
  if (canary !== undefined) {
    const routing = canary.trafficRouting;
    const routed =
      routing !== undefined && TRAFFIC_ROUTING_PROVIDERS.some((provider) => routing[provider] !== undefined);
    strategy.canary = {
      ...canary,
      steps: canary.steps ?? [],
      maxSurge: canary.maxSurge ?? d.canary.maxSurge,
      maxUnavailable: canary.maxUnavailable ?? d.canary.maxUnavailable,
      scaleDownDelaySeconds:
        canary.scaleDownDelaySeconds ??
        (routed && canary.dynamicStableScale !== true
          ? d.canary.scaleDownDelaySeconds
          : d.canary.scaleDownDelaySecondsWithoutRouter),
      abortScaleDownDelaySeconds:
        canary.abortScaleDownDelaySeconds ??
        (routed ? d.canary.abortScaleDownDelaySeconds : d.canary.scaleDownDelaySecondsWithoutRouter),
      dynamicStableScale: canary.dynamicStableScale ?? d.canary.dynamicStableScale,
    };
  }
  return {
    ...spec,
    replicas: spec.replicas ?? d.replicas,
    minReadySeconds: spec.minReadySeconds ?? d.minReadySeconds,
    revisionHistoryLimit: spec.revisionHistoryLimit ?? d.revisionHistoryLimit,
    progressDeadlineSeconds: spec.progressDeadlineSeconds ?? d.progressDeadlineSeconds,
    progressDeadlineAbort: spec.progressDeadlineAbort ?? d.progressDeadlineAbort,
    paused: spec.paused ?? d.paused,
    strategy,
  };
}
