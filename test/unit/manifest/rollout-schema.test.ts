// Tests for the Rollout / analysis schemas, defaults and the apiVersion conversion.
import { describe, it, expect } from 'vitest';
import {
  rolloutSchema,
  withDefaults,
  canaryStepKind,
  ROLLOUT_DEFAULTS,
  toRollgateApiVersion,
  ROLLGATE_API_VERSION,
  ARGO_API_VERSION,
  type Rollout,
} from '../../../src/manifest/rollout.ts';
import { analysisTemplateSchema, analysisRunSchema } from '../../../src/manifest/analysis.ts';

const rollout = {
  apiVersion: ARGO_API_VERSION,
  kind: 'Rollout',
  metadata: { name: 'web', namespace: 'apps' },
  spec: {
    replicas: 4,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
    },
    strategy: {
      canary: { steps: [{ setWeight: 20 }, { pause: { duration: '1m' } }, { pause: {} }] },
    },
  },
};

describe('rolloutSchema', () => {
  it('accepts an Argo canary Rollout and keeps the pod template as written', () => {
    const parsed = rolloutSchema.parse(rollout);
    expect(parsed.spec.template.spec.containers[0]).toMatchObject({ ports: [{ containerPort: 80 }] });
    expect(parsed.spec.strategy.canary?.steps?.map(canaryStepKind)).toEqual(['setWeight', 'pause', 'pause']);
  });

  it('leaves the upper bound of setWeight to the checks (it depends on maxTrafficWeight), refuses a negative one', () => {
    const high = structuredClone(rollout);
    high.spec.strategy.canary.steps[0] = { setWeight: 150 };
    expect(rolloutSchema.safeParse(high).success).toBe(true);
    const bad = structuredClone(rollout);
    bad.spec.strategy.canary.steps[0] = { setWeight: -5 };
    const result = rolloutSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['spec', 'strategy', 'canary', 'steps', 0, 'setWeight']);
    expect(result.error?.issues[0]?.message).toBe('must be at least 0, got -5');
  });

  it('refuses a step that sets two kinds at once', () => {
    const bad = structuredClone(rollout) as { spec: { strategy: { canary: { steps: unknown[] } } } };
    bad.spec.strategy.canary.steps[0] = { setWeight: 10, pause: {} };
    const result = rolloutSchema.safeParse(bad);
    expect(result.error?.issues[0]?.message).toContain('got setWeight and pause');
  });

  it('keeps unknown status fields the planner adds', () => {
    const parsed = rolloutSchema.parse({
      ...rollout,
      status: { phase: 'Paused', currentStepIndex: 1, rollgate: { progressStartedAt: 'x' } },
    });
    expect((parsed.status as Record<string, unknown>)['rollgate']).toEqual({ progressStartedAt: 'x' });
  });
});

describe('withDefaults', () => {
  it("fills Argo's defaults and keeps what is set", () => {
    const spec = withDefaults(rolloutSchema.parse(rollout).spec);
    expect(spec.progressDeadlineSeconds).toBe(600);
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.replicas).toBe(4);
    // No traffic router: the scale-down delays default to 0, as in Argo.
    expect(spec.strategy.canary).toMatchObject({
      maxSurge: '25%',
      maxUnavailable: '25%',
      abortScaleDownDelaySeconds: 0,
      scaleDownDelaySeconds: 0,
    });
    expect(ROLLOUT_DEFAULTS.progressDeadlineSeconds).toBe(600);
  });

  it('defaults both scale-down delays to 30 s with a traffic router, and scaleDownDelaySeconds to 0 with dynamicStableScale', () => {
    const parsed = rolloutSchema.parse(rollout).spec;
    const routed = (extra: Record<string, unknown>) =>
      withDefaults({
        ...parsed,
        strategy: { canary: { ...parsed.strategy.canary, trafficRouting: { istio: {} }, ...extra } },
      }).strategy.canary;
    expect(routed({})).toMatchObject({ scaleDownDelaySeconds: 30, abortScaleDownDelaySeconds: 30 });
    expect(routed({ dynamicStableScale: true })).toMatchObject({
      scaleDownDelaySeconds: 0,
      abortScaleDownDelaySeconds: 30,
    });
    expect(routed({ scaleDownDelaySeconds: 5 })).toMatchObject({ scaleDownDelaySeconds: 5 });
    // managedRoutes alone is no router.
    expect(
      withDefaults({
        ...parsed,
        strategy: {
          canary: { ...parsed.strategy.canary, trafficRouting: { managedRoutes: [{ name: 'h' }] } },
        },
      }).strategy.canary,
    ).toMatchObject({ scaleDownDelaySeconds: 0 });
  });
});

describe('toRollgateApiVersion', () => {
  it('moves an Argo object to rollgate.dev without touching the spec', () => {
    const parsed: Rollout = rolloutSchema.parse(rollout);
    const converted = toRollgateApiVersion(parsed);
    expect(converted.apiVersion).toBe(ROLLGATE_API_VERSION);
    expect(converted.spec).toBe(parsed.spec);
    expect(parsed.apiVersion).toBe(ARGO_API_VERSION);
  });
});

describe('analysis schemas', () => {
  it('accepts a template with int-or-string limits and a web provider', () => {
    const parsed = analysisTemplateSchema.parse({
      apiVersion: ARGO_API_VERSION,
      kind: 'AnalysisTemplate',
      metadata: { name: 'success-rate' },
      spec: {
        args: [{ name: 'svc' }, { name: 'token', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
        metrics: [
          {
            name: 'rate',
            interval: '1m',
            count: '{{args.count}}',
            failureLimit: 3,
            provider: { web: { url: 'http://x', headers: [{ key: 'a', value: 'b' }], jsonPath: '{$.ok}' } },
          },
        ],
      },
    });
    expect(parsed.spec.metrics?.[0]?.count).toBe('{{args.count}}');
  });

  it('accepts an AnalysisRun status with measurements', () => {
    const parsed = analysisRunSchema.parse({
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'AnalysisRun',
      metadata: { name: 'r1' },
      spec: { metrics: [{ name: 'm', provider: { prometheus: { query: 'up' } } }] },
      status: {
        phase: 'Running',
        metricResults: [{ name: 'm', phase: 'Running', measurements: [{ phase: 'Successful', value: '1' }] }],
      },
    });
    expect(parsed.status?.metricResults?.[0]?.measurements?.[0]?.value).toBe('1');
  });
});
