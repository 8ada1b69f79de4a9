// Tests for validation: each malformed input gets its own precise error at the right line.
import { describe, it, expect } from 'vitest';
import {
  validateManifests,
  validateObject,
  EXPECT_IN_CLUSTER_ANNOTATION,
} from '../../../src/manifest/validate.ts';
import { parseManifests } from '../../../src/manifest/manifest.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

// ROLLOUT_YAML (a valid canary Rollout) and TEMPLATE (a valid AnalysisTemplate): tests replace one line or
// block to break exactly one thing.
const TEMPLATE = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: success-rate
  namespace: apps
spec:
  args:
    - name: service
  metrics:
    - name: success
      interval: 1m
      count: 3
      failureLimit: "{{args.limit}}"
      successCondition: result[0] >= 0.95
      provider:
        prometheus:
          address: http://prometheus:9090
          query: sum(rate(ok[1m])) / sum(rate(all[1m]))
`;

function check(text: string, file = 'rollout.yaml') {
  const report = validateManifests([{ file, text }]);
  const errors = report.objects.flatMap((o) =>
    o.errors.map((e) => `${e.line}:${e.col} ${e.path}: ${e.message}`),
  );
  const warnings = report.objects.flatMap((o) => o.warnings.map((e) => `${e.line} ${e.path}: ${e.message}`));
  return { report, errors, warnings };
}

describe('validateManifests: a valid Rollout and AnalysisTemplate', () => {
  it('reports both objects valid, with their file and line', () => {
    const { report, errors } = check(`${ROLLOUT_YAML}---\n${TEMPLATE}`);
    expect(errors).toEqual([]);
    expect(report.objects.map((o) => [o.kind, o.name, o.line, o.valid])).toEqual([
      ['Rollout', 'web', 1, true],
      ['AnalysisTemplate', 'success-rate', 30, true],
    ]);
    expect(report.summary).toEqual({ valid: 2, invalid: 0, skipped: 0 });
  });

  it('accepts the rollgate.dev apiVersion too', () => {
    expect(check(ROLLOUT_YAML.replace('argoproj.io/v1alpha1', 'rollgate.dev/v1alpha1')).errors).toEqual([]);
  });
});

describe('validateManifests: malformed Rollouts', () => {
  it('missing selector', () => {
    const text = ROLLOUT_YAML.replace('  selector:\n    matchLabels:\n      app: web\n', '');
    expect(check(text).errors).toEqual([
      '6:1 spec.selector: is required (or set spec.workloadRef to read it from a Deployment, ReplicaSet or PodTemplate)',
    ]);
  });

  it('missing template', () => {
    const text = ROLLOUT_YAML.replace(/ {2}template:\n( {4}.*\n| {6}.*\n)+/, '');
    expect(check(text).errors).toEqual([
      '6:1 spec.template: is required (or set spec.workloadRef to read it from a Deployment, ReplicaSet or PodTemplate)',
    ]);
  });

  it('template labels that do not match the selector', () => {
    const text = ROLLOUT_YAML.replace('      labels:\n        app: web', '      labels:\n        app: api');
    expect(check(text).errors).toEqual([
      '13:7 spec.template.metadata.labels: do not match spec.selector: label app is "api", the selector wants "web"',
    ]);
  });

  it('an empty selector', () => {
    const text = ROLLOUT_YAML.replace('  selector:\n    matchLabels:\n      app: web\n', '  selector: {}\n');
    expect(check(text).errors).toEqual([
      '8:3 spec.selector: must not be empty: give matchLabels or matchExpressions',
    ]);
  });

  it('setWeight 150', () => {
    const text = ROLLOUT_YAML.replace('- setWeight: 60', '- setWeight: 150');
    expect(check(text).errors).toEqual([
      '27:11 spec.strategy.canary.steps[2].setWeight: must be between 0 and 100, got 150',
    ]);
  });

  it('a pause duration that cannot be parsed', () => {
    const text = ROLLOUT_YAML.replace('duration: 30s', 'duration: 30 seconds');
    expect(check(text).errors).toEqual([
      '26:19 spec.strategy.canary.steps[1].pause.duration: invalid duration "30 seconds": unexpected "30 seconds" (expected e.g. "30s", "5m", "1h30m", "250ms" or integer seconds)',
    ]);
  });

  it('memory: invalid', () => {
    const text = ROLLOUT_YAML.replace('memory: 128Mi', 'memory: invalid');
    expect(check(text).errors).toEqual([
      '21:32 spec.template.spec.containers[0].resources.limits.memory: invalid quantity "invalid": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
    ]);
  });

  it('a request above its limit', () => {
    const text = ROLLOUT_YAML.replace('cpu: 100m', 'cpu: "2"');
    expect(check(text).errors).toEqual([
      '20:24 spec.template.spec.containers[0].resources.requests.cpu: must be less than or equal to the cpu limit (1)',
    ]);
  });

  it('wrong types', () => {
    const text = ROLLOUT_YAML.replace('replicas: 3', 'replicas: three').replace(
      'image: nginx:1.27',
      'image: [nginx]',
    );
    expect(check(text).errors).toEqual([
      '7:3 spec.replicas: must be an integer, got "three"',
      '18:11 spec.template.spec.containers[0].image: must be a string, got a list',
    ]);
  });

  it('negative replicas', () => {
    expect(check(ROLLOUT_YAML.replace('replicas: 3', 'replicas: -1')).errors).toEqual([
      '7:3 spec.replicas: must be >= 0, got -1',
    ]);
  });

  it('a step with two kinds, and one with none', () => {
    const text = ROLLOUT_YAML.replace('- setWeight: 20', '- setWeight: 20\n          pause: {}').replace(
      '- pause: {}',
      '- setweight: 10',
    );
    expect(check(text).errors).toEqual([
      '25:11 spec.strategy.canary.steps[0]: a step must set only one of setWeight, pause, experiment, analysis, got setWeight and pause',
      '29:11 spec.strategy.canary.steps[3]: a step must set one of setWeight, pause, setCanaryScale, analysis, experiment, setHeaderRoute, setMirrorRoute, plugin',
    ]);
  });

  it('setCanaryScale beside setWeight: refused, never half-run (the planner runs one main kind per step)', () => {
    const text = ROLLOUT_YAML.replace(
      '- setWeight: 20',
      '- setWeight: 20\n          setCanaryScale: {replicas: 1}',
    );
    expect(check(text).errors.filter((e) => e.includes('setCanaryScale: unsupported'))).toEqual([
      '26:11 spec.strategy.canary.steps[0].setCanaryScale: unsupported: strategy.canary.steps[0].setCanaryScale (Rollgate runs setCanaryScale in a step of its own or beside a route: put it in the step before)',
    ]);
  });

  it('an unknown apiVersion for a known kind', () => {
    expect(check(ROLLOUT_YAML.replace('argoproj.io/v1alpha1', 'argoproj.io/v1beta1')).errors).toEqual([
      '1:1 apiVersion: must be one of argoproj.io/v1alpha1, rollgate.dev/v1alpha1, got "argoproj.io/v1beta1"',
    ]);
  });

  it('setHeaderRoute without trafficRouting', () => {
    const text = ROLLOUT_YAML.replace('- pause: {}', '- setHeaderRoute: {name: canary-header}');
    expect(check(text).errors.sort()).toEqual([
      '28:11 spec.strategy.canary.steps[3].setHeaderRoute: requires strategy.canary.trafficRouting',
      '28:11 spec.strategy.canary.steps[3].setHeaderRoute: unsupported: strategy.canary.steps[3].setHeaderRoute (header routes need the Gateway API, Istio, APISIX, Contour or ALB router)',
    ]);
  });

  it('maxSurge and maxUnavailable both 0', () => {
    const text = ROLLOUT_YAML.replace(
      '    canary:\n',
      '    canary:\n      maxSurge: 0\n      maxUnavailable: "0%"\n',
    );
    expect(check(text).errors).toEqual([
      '24:7 spec.strategy.canary.maxSurge: maxSurge and maxUnavailable cannot both be 0 (the rollout could never progress)',
    ]);
  });

  it('no strategy at all', () => {
    const text = ROLLOUT_YAML.slice(0, ROLLOUT_YAML.indexOf('  strategy:')) + '  strategy: {}\n';
    expect(check(text).errors).toEqual([
      '22:3 spec.strategy: must set strategy.canary or strategy.blueGreen',
    ]);
  });

  it('duplicate objects are reported at the second, with the line of the first', () => {
    const { errors, report } = check(`${ROLLOUT_YAML}---\n${ROLLOUT_YAML}`);
    expect(errors).toEqual([
      '33:3 metadata.name: duplicate Rollout "apps/web": first defined at rollout.yaml:1',
    ]);
    expect(report.objects.map((o) => o.valid)).toEqual([true, false]);
  });

  it('duplicates across files name the first file', () => {
    const report = validateManifests([
      { file: 'a.yaml', text: TEMPLATE },
      { file: 'b.yaml', text: TEMPLATE },
    ]);
    expect(report.objects[1]?.errors[0]?.message).toBe(
      'duplicate AnalysisTemplate "apps/success-rate": first defined at a.yaml:1',
    );
  });

  it('invalid YAML is an invalid entry with file:line:col', () => {
    const { report } = check(`${ROLLOUT_YAML}---\napiVersion: v1\nkind: X\nspec:\n\tfoo: 1\n`);
    expect(report.summary).toEqual({ valid: 1, invalid: 1, skipped: 0 });
    expect(report.objects[1]).toMatchObject({
      file: 'rollout.yaml',
      line: 33,
      col: 1,
      kind: null,
      valid: false,
      errors: [{ path: '', line: 33, col: 1, message: 'invalid YAML: Tabs are not allowed as indentation' }],
    });
  });

  it('an alias bomb is refused as invalid', () => {
    const bomb = `apiVersion: argoproj.io/v1alpha1\nkind: Rollout\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n`;
    const { report } = check(bomb);
    expect(report.objects[0]?.errors[0]?.message).toBe(
      'refused: alias expansion exceeds 100 (a YAML alias bomb?)',
    );
    expect(report.summary.invalid).toBe(1);
  });

  it('reports each object and each skipped kind with where it is and what it says it is, in that order', () => {
    const { report } = check(
      `${TEMPLATE}---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n`,
      'mix.yaml',
    );
    // Key order is what `rollgate validate --output json` prints.
    expect(JSON.stringify(report.objects[0])).toBe(
      JSON.stringify({
        file: 'mix.yaml',
        line: 1,
        col: 1,
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AnalysisTemplate',
        name: 'success-rate',
        namespace: 'apps',
        valid: true,
        errors: [],
        warnings: [],
      }),
    );
    expect(JSON.stringify(report.skipped[0])).toBe(
      JSON.stringify({
        file: 'mix.yaml',
        line: 20,
        col: 1,
        apiVersion: 'v1',
        kind: 'Service',
        name: 'web',
        reason: 'kind Service (v1) is not validated by Rollgate',
      }),
    );
  });

  it('skips other kinds and non-Kubernetes YAML with a note', () => {
    const { report } = check('apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\nfoo: bar\n');
    expect(report.summary).toEqual({ valid: 0, invalid: 0, skipped: 2 });
    expect(report.skipped.map((s) => s.reason)).toEqual([
      'kind Service (v1) is not validated by Rollgate',
      'not a Kubernetes object (no apiVersion/kind)',
    ]);
  });
});

describe('unknown fields', () => {
  it('warns about a misspelt field instead of dropping it silently', () => {
    const text = ROLLOUT_YAML.replace(
      '  replicas: 3\n',
      '  replicas: 3\n  progresDeadlineSeconds: 60\n',
    ).replace('- setWeight: 60', '- setWeight: 60\n          wieght: 1');
    const { report, warnings } = check(text);
    expect(report.objects[0]?.valid).toBe(true);
    expect(warnings).toEqual([
      '8 spec.progresDeadlineSeconds: unknown field: ignored (not part of the argoproj.io/v1alpha1 schema)',
      '29 spec.strategy.canary.steps[2].wieght: unknown field: ignored (not part of the argoproj.io/v1alpha1 schema)',
    ]);
  });

  it('does not flag fields inside the pod template or metadata', () => {
    const text = ROLLOUT_YAML.replace(
      '          image: nginx:1.27\n',
      '          image: nginx:1.27\n          imagePullPolicy: Always\n',
    );
    expect(check(text).warnings).toEqual([]);
  });
});

describe('unsupported fields', () => {
  it('blueGreen is driven (antiAffinity, previewMetadata and activeMetadata too)', () => {
    const text = ROLLOUT_YAML.replace(
      / {2}strategy:[\s\S]*$/,
      '  strategy:\n    blueGreen:\n      activeService: web\n      antiAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution: {}\n      previewMetadata:\n        labels: {role: preview}\n      activeMetadata:\n        labels: {role: active}\n',
    );
    const { errors, warnings } = check(text);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('canaryMetadata, stableMetadata and canary antiAffinity are driven', () => {
    const text = ROLLOUT_YAML.replace(
      '    canary:\n',
      '    canary:\n      canaryMetadata:\n        labels: {role: canary}\n        annotations: {phase: canary}\n      stableMetadata:\n        labels: {role: stable}\n      antiAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution: {weight: 50}\n',
    );
    const { report, errors, warnings } = check(text);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
    expect(report.objects[0]?.valid).toBe(true);
  });

  it('canary antiAffinity as Argo checks it: exactly one rule, weight 1–100', () => {
    const both = ROLLOUT_YAML.replace(
      '    canary:\n',
      '    canary:\n      antiAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution: {}\n        preferredDuringSchedulingIgnoredDuringExecution: {weight: 0}\n',
    );
    expect(check(both).errors).toEqual([
      '24:7 spec.strategy.canary.antiAffinity: must set exactly one of preferredDuringSchedulingIgnoredDuringExecution and requiredDuringSchedulingIgnoredDuringExecution',
      '26:59 spec.strategy.canary.antiAffinity.preferredDuringSchedulingIgnoredDuringExecution.weight: must be between 1 and 100, got 0',
    ]);
  });

  it('ephemeral labels may not take pods out of their selector nor set the hash label', () => {
    const text = ROLLOUT_YAML.replace(
      '    canary:\n',
      '    canary:\n      canaryMetadata:\n        labels: {app: canary}\n      stableMetadata:\n        labels: {rollouts-pod-template-hash: abc}\n',
    );
    const { errors } = check(text);
    expect(errors).toEqual([
      '25:9 spec.strategy.canary.canaryMetadata.labels: would take the pods out of spec.selector: label app is "canary", the selector wants "web"',
      '27:18 spec.strategy.canary.stableMetadata.labels.rollouts-pod-template-hash: must not be set: the controller sets it to tie pods to their ReplicaSet',
    ]);
  });

  it('selector.matchExpressions is driven; restartAt is supported', () => {
    const text = ROLLOUT_YAML.replace(
      '  replicas: 3\n',
      '  replicas: 3\n  restartAt: "2026-01-01T00:00:00Z"\n',
    ).replace(
      '    matchLabels:\n      app: web\n',
      '    matchLabels:\n      app: web\n    matchExpressions:\n      - {key: app, operator: In, values: [web]}\n',
    );
    const { report, warnings } = check(text);
    expect(report.objects[0]?.valid).toBe(true);
    expect(warnings).toEqual([]);
  });

  it("a rollout analysis's dryRun and measurementRetention are accepted (they reach its AnalysisRuns)", () => {
    const text = ROLLOUT_YAML.replace(
      '- pause: {}',
      '- analysis:\n            templates: [{templateName: success-rate}]\n            dryRun: [{metricName: latency}]\n            measurementRetention: [{metricName: latency, limit: 20}]',
    );
    const { report, errors, warnings } = check(`${text}---\n${TEMPLATE}`);
    expect(report.objects[0]?.valid).toBe(true);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('an unsupported metric provider is an error on the template', () => {
    const text = TEMPLATE.replace(
      / {8}prometheus:[\s\S]*$/,
      '        plugin:\n          argoproj-labs/sample:\n            query: x\n',
    );
    expect(check(text).errors).toEqual([
      '16:9 spec.metrics[0].provider.plugin: unsupported: spec.metrics[0].provider.plugin (Rollgate runs prometheus, web, job, datadog, newRelic, graphite, cloudWatch, influxdb, wavefront, skywalking and kayenta metrics)',
    ]);
  });
});

describe('analysis template references', () => {
  const withAnalysis = ROLLOUT_YAML.replace(
    '- pause: {}',
    '- analysis:\n            templates:\n              - templateName: success-rate',
  );

  it('are found among the validated manifests in the same namespace', () => {
    expect(check(`${withAnalysis}---\n${TEMPLATE}`).errors).toEqual([]);
  });

  it('are an error when missing', () => {
    expect(check(withAnalysis).errors).toEqual([
      `30:17 spec.strategy.canary.steps[3].analysis.templates[0].templateName: AnalysisTemplate "success-rate" not found among the validated manifests in namespace apps; add it, or list it in the annotation ${EXPECT_IN_CLUSTER_ANNOTATION} if it already exists in the cluster`,
    ]);
  });

  it('in another namespace do not count', () => {
    const elsewhere = TEMPLATE.replace('namespace: apps', 'namespace: other');
    expect(check(`${withAnalysis}---\n${elsewhere}`).errors).toHaveLength(1);
  });

  it('may be declared as expected in the cluster', () => {
    const annotated = withAnalysis.replace(
      '  namespace: apps\n',
      `  namespace: apps\n  annotations:\n    ${EXPECT_IN_CLUSTER_ANNOTATION}: "success-rate, other"\n`,
    );
    expect(check(annotated).errors).toEqual([]);
    const everything = withAnalysis.replace(
      '  namespace: apps\n',
      `  namespace: apps\n  annotations:\n    ${EXPECT_IN_CLUSTER_ANNOTATION}: "*"\n`,
    );
    expect(check(everything).errors).toEqual([]);
  });

  it('clusterScope references look for a ClusterAnalysisTemplate', () => {
    const cluster = withAnalysis.replace(
      '- templateName: success-rate',
      '- templateName: success-rate\n                clusterScope: true',
    );
    expect(check(`${cluster}---\n${TEMPLATE}`).errors[0]).toContain(
      'ClusterAnalysisTemplate "success-rate" not found',
    );
    const clusterTemplate = TEMPLATE.replace(
      'kind: AnalysisTemplate',
      'kind: ClusterAnalysisTemplate',
    ).replace('  namespace: apps\n', '');
    expect(check(`${cluster}---\n${clusterTemplate}`).errors).toEqual([]);
  });
});

describe('AnalysisTemplate limits', () => {
  it('accepts a negative limit as "no limit" (Argo documents failureLimit: -1) but not a negative count', () => {
    const unlimited = TEMPLATE.replace(
      '      failureLimit: "{{args.limit}}"\n',
      '      failureLimit: -1\n      inconclusiveLimit: "-1"\n      consecutiveErrorLimit: -2\n',
    );
    expect(check(unlimited).errors).toEqual([]);
    expect(check(unlimited.replace('count: 3', 'count: -1')).errors).toEqual([
      '12:7 spec.metrics[0].count: must be a non-negative integer or an argument placeholder like "{{args.count}}", got -1',
    ]);
  });
});

describe('malformed AnalysisTemplates', () => {
  it('bad interval, bad count and no provider', () => {
    const text = TEMPLATE.replace('interval: 1m', 'interval: often')
      .replace('count: 3', 'count: many')
      .replace(/ {6}provider:[\s\S]*$/, '      provider: {}\n');
    expect(check(text).errors).toEqual([
      '11:7 spec.metrics[0].interval: invalid duration "often": unexpected "often" (expected e.g. "30s", "5m", "1h30m", "250ms" or integer seconds)',
      '12:7 spec.metrics[0].count: must be a non-negative integer or an argument placeholder like "{{args.count}}", got "many"',
      '15:7 spec.metrics[0].provider: must set one provider (prometheus, web, job, datadog, newRelic, graphite, cloudWatch, influxdb, wavefront, skywalking, kayenta, judge)',
    ]);
  });
});

describe('semantic checks the schema cannot express', () => {
  it.each<[string, string, string[]]>([
    [
      'a name that is not a DNS subdomain',
      ROLLOUT_YAML.replace('  name: web\n', '  name: Web_1\n'),
      ['4:3 metadata.name: must be a DNS subdomain (lowercase letters, digits, "-" and "."), got "Web_1"'],
    ],
    [
      'two containers of one name',
      ROLLOUT_YAML.replace(
        '            limits: {cpu: "1", memory: 128Mi}\n',
        '            limits: {cpu: "1", memory: 128Mi}\n        - name: web\n          image: sidecar:1\n',
      ),
      ['22:11 spec.template.spec.containers[1].name: duplicate container name "web" (also containers[0])'],
    ],
    [
      'minReadySeconds above the default progress deadline',
      ROLLOUT_YAML.replace('  replicas: 3\n', '  replicas: 3\n  minReadySeconds: 700\n'),
      ['8:3 spec.minReadySeconds: progressDeadlineSeconds (600) must be greater than minReadySeconds (700)'],
    ],
    [
      'a restartAt that is not a time',
      ROLLOUT_YAML.replace('  replicas: 3\n', '  replicas: 3\n  restartAt: tomorrow\n'),
      ['8:3 spec.restartAt: must be an RFC 3339 time, got "tomorrow"'],
    ],
    [
      'one Service as both canary and stable',
      ROLLOUT_YAML.replace(
        '    canary:\n',
        '    canary:\n      canaryService: web\n      stableService: web\n',
      ),
      ['24:7 spec.strategy.canary.canaryService: must differ from stableService (both are "web")'],
    ],
    [
      'a maxSurge that is neither a count nor a percentage',
      ROLLOUT_YAML.replace('    canary:\n', '    canary:\n      maxSurge: lots\n'),
      ['24:7 spec.strategy.canary.maxSurge: must be an integer or a percentage like "25%", got "lots"'],
    ],
    [
      'dynamicStableScale without a router and with scaleDownDelaySeconds',
      ROLLOUT_YAML.replace(
        '    canary:\n',
        '    canary:\n      dynamicStableScale: true\n      scaleDownDelaySeconds: 30\n',
      ),
      [
        '24:7 spec.strategy.canary.dynamicStableScale: requires strategy.canary.trafficRouting',
        '24:7 spec.strategy.canary.dynamicStableScale: cannot be used together with scaleDownDelaySeconds',
      ],
    ],
    [
      'a background analysis starting after the last step',
      `${ROLLOUT_YAML.replace(
        '    canary:\n',
        '    canary:\n      analysis:\n        templates: [{templateName: success-rate}]\n        startingStep: 9\n',
      )}---\n${TEMPLATE}`,
      ['26:9 spec.strategy.canary.analysis.startingStep: must be at most the number of steps (4), got 9'],
    ],
    [
      'an analysis step without templates',
      ROLLOUT_YAML.replace('- pause: {}', '- analysis: {templates: []}'),
      ['28:22 spec.strategy.canary.steps[3].analysis.templates: must list at least one template'],
    ],
    [
      'a setCanaryScale with two sizes and no router',
      ROLLOUT_YAML.replace('- pause: {}', '- setCanaryScale: {replicas: 1, weight: 10}'),
      [
        '28:11 spec.strategy.canary.steps[3].setCanaryScale: must set only one of replicas, weight, matchTrafficWeight, got replicas and weight',
        "28:11 spec.strategy.canary.steps[3].setCanaryScale: requires strategy.canary.trafficRouting (without a router the canary's share is its replica count)",
      ],
    ],
    [
      'two metrics of one name',
      `${TEMPLATE}    - name: success\n      provider:\n        web: {url: "http://x"}\n`,
      ['19:7 spec.metrics[1].name: duplicate metric name "success" (also metrics[0])'],
    ],
    [
      'a metric with two providers',
      TEMPLATE.replace('        prometheus:\n', '        web: {url: "http://x"}\n        prometheus:\n'),
      ['15:7 spec.metrics[0].provider: must set only one provider, got prometheus and web'],
    ],
    [
      'an argument declared twice, the second with both value and valueFrom',
      TEMPLATE.replace(
        '    - name: service\n',
        '    - name: service\n    - name: service\n      value: a\n      valueFrom: {fieldRef: {fieldPath: metadata.name}}\n',
      ),
      [
        '9:7 spec.args[1].name: duplicate argument "service" (also args[0])',
        '9:7 spec.args[1]: must set only one of value and valueFrom',
      ],
    ],
  ])('%s', (_name, text, wantErrors) => {
    expect(check(text).errors).toEqual(wantErrors);
  });
});

// An AnalysisRun as Argo's examples write one: a generated name, no template.
const RUN = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisRun
metadata:
  generateName: smoke-
  namespace: apps
spec:
  metrics:
    - name: up
      provider:
        web: {url: "http://smoke/health"}
`;

describe('metadata.generateName', () => {
  it.each<[string, string, string[]]>([
    ['an AnalysisRun with generateName and no name is valid', RUN, []],
    ['an AnalysisRun with a name is valid', RUN.replace('generateName: smoke-', 'name: smoke'), []],
    ['two identical generated AnalysisRuns are not duplicates', `${RUN}---\n${RUN}`, []],
    [
      'an AnalysisRun with neither name nor generateName',
      RUN.replace('  generateName: smoke-\n', ''),
      ['3:1 metadata.name: required'],
    ],
    [
      'an empty generateName',
      RUN.replace('generateName: smoke-', 'generateName: ""'),
      ['4:3 metadata.generateName: must not be empty'],
    ],
    [
      'a generateName that cannot start a DNS subdomain',
      RUN.replace('generateName: smoke-', 'generateName: Smoke_'),
      [
        '4:3 metadata.generateName: must start a DNS subdomain (lowercase letters, digits, "-" and "."), got "Smoke_"',
      ],
    ],
    [
      'a Rollout with generateName instead of a name',
      ROLLOUT_YAML.replace('  name: web\n', '  generateName: web-\n'),
      [
        '3:1 metadata.name: required (Rollouts are referenced by name; generateName is for objects nothing refers to, such as AnalysisRuns, Experiments and Jobs)',
      ],
    ],
    [
      'an AnalysisTemplate with generateName instead of a name',
      TEMPLATE.replace('  name: success-rate\n', '  generateName: success-rate-\n'),
      [
        '3:1 metadata.name: required (AnalysisTemplates are referenced by name; generateName is for objects nothing refers to, such as AnalysisRuns, Experiments and Jobs)',
      ],
    ],
  ])('%s', (_name, text, wantErrors) => {
    expect(check(text).errors).toEqual(wantErrors);
  });

  it('reports a generated object without a name', () => {
    const { report } = check(RUN);
    expect(report.objects.map((o) => [o.kind, o.name, o.valid])).toEqual([['AnalysisRun', null, true]]);
  });
});

describe('validateObject', () => {
  it('validates one object without cross-object checks', () => {
    const obj = parseManifests(
      ROLLOUT_YAML.replace('- pause: {}', '- analysis: {templates: [{templateName: x}]}'),
      'r.yaml',
    ).objects[0]!;
    const result = validateObject(obj);
    expect(result.valid).toBe(true);
    expect(result).toMatchObject({
      file: 'r.yaml',
      line: 1,
      kind: 'Rollout',
      name: 'web',
      namespace: 'apps',
    });
  });
});

// The template block of ROLLOUT_YAML (lines 11-21) replaced by a reference to a Deployment.
const WORKLOAD_REF = '  workloadRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: web\n';
function withWorkloadRef(ref = WORKLOAD_REF, keepTemplate = false): string {
  const template = / {2}template:\n(?: {4}.*\n)+/;
  return keepTemplate
    ? ROLLOUT_YAML.replace('  strategy:\n', `${ref}  strategy:\n`)
    : ROLLOUT_YAML.replace(template, ref);
}

describe('validateManifests: spec.workloadRef', () => {
  it('a Rollout reading its template from a Deployment is valid, with or without a selector', () => {
    expect(check(withWorkloadRef()).errors).toEqual([]);
    expect(check(withWorkloadRef()).warnings).toEqual([]);
    const noSelector = withWorkloadRef().replace('  selector:\n    matchLabels:\n      app: web\n', '');
    expect(check(noSelector).errors).toEqual([]);
    const scaleDown = withWorkloadRef(`${WORKLOAD_REF}    scaleDown: progressively\n`);
    expect(check(scaleDown).errors).toEqual([]);
  });

  it('refuses a template beside the reference, at the template', () => {
    expect(check(withWorkloadRef(WORKLOAD_REF, true)).errors).toEqual([
      '11:3 spec.template: must not be set with spec.workloadRef: the pod template is read from the referenced Deployment',
    ]);
  });

  it('refuses another kind or apiVersion, at the field', () => {
    const statefulSet = withWorkloadRef(WORKLOAD_REF.replace('kind: Deployment', 'kind: StatefulSet'));
    expect(check(statefulSet).errors).toEqual([
      '13:5 spec.workloadRef.kind: must be Deployment or ReplicaSet in apps/v1: a Rollout reads its pod template from apps/v1 Deployment, apps/v1 ReplicaSet or v1 PodTemplate, got "StatefulSet"',
    ]);
    const v1beta1 = withWorkloadRef(WORKLOAD_REF.replace('apps/v1', 'apps/v1beta1'));
    expect(check(v1beta1).errors).toEqual([
      '12:5 spec.workloadRef.apiVersion: must be apps/v1 (a Deployment or ReplicaSet) or v1 (a PodTemplate), got "apps/v1beta1"',
    ]);
  });

  it('a PodTemplate or ReplicaSet (which Argo reads) is valid; a PodTemplate needs the selector of the Rollout', () => {
    const podTemplateRef = WORKLOAD_REF.replace('apps/v1', 'v1').replace(
      'kind: Deployment',
      'kind: PodTemplate',
    );
    expect(check(withWorkloadRef(podTemplateRef))).toMatchObject({ errors: [], warnings: [] });
    const replicaSetRef = WORKLOAD_REF.replace('kind: Deployment', 'kind: ReplicaSet');
    expect(check(withWorkloadRef(replicaSetRef))).toMatchObject({ errors: [], warnings: [] });
    const noSelector = (ref: string): string =>
      withWorkloadRef(ref).replace('  selector:\n    matchLabels:\n      app: web\n', '');
    expect(check(noSelector(replicaSetRef)).errors).toEqual([]);
    expect(check(noSelector(podTemplateRef)).errors).toEqual([
      '6:1 spec.selector: is required with a workloadRef to a PodTemplate: a PodTemplate has no selector to stand in for it',
    ]);
  });

  it('refuses scaleDown other than never with a ReplicaSet or PodTemplate, at the field', () => {
    const replicaSetRef = WORKLOAD_REF.replace('kind: Deployment', 'kind: ReplicaSet');
    expect(check(withWorkloadRef(`${replicaSetRef}    scaleDown: onsuccess\n`)).errors).toEqual([
      "15:5 spec.workloadRef.scaleDown: must be never (or absent) with a ReplicaSet: scaleDown hands a Deployment's pods over to the Rollout, and Argo scales no ReplicaSet either; scale it to 0 yourself once the Rollout runs",
    ]);
    expect(check(withWorkloadRef(`${replicaSetRef}    scaleDown: never\n`)).errors).toEqual([]);
  });

  it('refuses an unknown scaleDown and an empty name', () => {
    const errors = check(
      withWorkloadRef(`${WORKLOAD_REF.replace('name: web', 'name: ""')}    scaleDown: always\n`),
    ).errors;
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^14:5 spec\.workloadRef\.name: /);
    expect(errors[1]).toMatch(/^15:5 spec\.workloadRef\.scaleDown: .*never.*onsuccess.*progressively/);
  });
});
