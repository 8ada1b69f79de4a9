// `rollgate plan --analysis FILE --replay`: three past runs made by real rollouts (sandbox + real Prometheus), a stricter template replayed over them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayReport } from '../../../src/analysis/replay/format-replay-report.ts';
import { ANALYSIS_TEMPLATES_ANNOTATION } from '../../../src/analysis/run-template-annotation.ts';
import { startPrometheus, type TestPrometheus } from '../../support/prometheus.ts';
import { runCli } from '../../support/run-cli.ts';
import { isFullyPromoted, testRollout } from '../reconcile/reconcile-harness.ts';
import {
  NAMESPACE,
  ReconcileHarness,
  analysisRunsOf,
  createAnalysisTemplate,
  driveUntil,
} from './analysis-harness.ts';

const METRIC = 'rollgate_test_replay_success_rate';

let prometheus: TestPrometheus;
let harness: ReconcileHarness;
let kubeconfig: string;
let dir: string;

function templateSpec(condition: string) {
  return {
    metrics: [
      {
        name: 'success-rate',
        interval: '5s',
        count: 2,
        successCondition: condition,
        provider: { prometheus: { address: prometheus.address, query: `${METRIC}{rollout="web"}` } },
      },
    ],
  };
}

/** The template file a user edits: the same name, a stricter condition. */
function writeTemplate(file: string, condition: string): string {
  const path = join(dir, file);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'AnalysisTemplate',
      metadata: { name: 'success-rate', namespace: NAMESPACE },
      spec: templateSpec(condition),
    }),
  );
  return path;
}

beforeAll(async () => {
  prometheus = await startPrometheus();
  harness = await ReconcileHarness.start({ seed: 33 });
  ({ kubeconfig, dir } = await harness.writeKubeconfig());
  await createAnalysisTemplate(harness, 'success-rate', templateSpec('result[0] >= 0.9'));
  const object = testRollout({ name: 'web', replicas: 2, steps: [] });
  const spec = object.spec as { strategy: { canary: Record<string, unknown> } };
  spec.strategy.canary = {
    ...spec.strategy.canary,
    steps: [{ setWeight: 50 }, { analysis: { templates: [{ templateName: 'success-rate' }] } }],
  };
  const key = await harness.createRollout(object);
  await driveUntil(harness, key, isFullyPromoted, { timeoutMs: 60_000 });
  // Three releases, each judged by the live template on what Prometheus said then.
  for (const [image, rate] of [
    ['app:2.0', 0.99],
    ['app:3.0', 0.93],
    ['app:4.0', 0.97],
  ] as const) {
    prometheus.exporter.set(METRIC, rate, { rollout: 'web' });
    await prometheus.waitFor(`${METRIC}{rollout="web"}`, (v) => v[0] === rate);
    await harness.patchSpec(key, {
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } },
    });
    await driveUntil(
      harness,
      key,
      (o) => isFullyPromoted(o) && o.rollout.status?.stableRS === o.rollout.status?.currentPodHash,
      {
        timeoutMs: 120_000,
      },
    );
  }
  const runs = await analysisRunsOf(harness, key);
  expect(runs.map((r) => r.status?.phase)).toEqual(['Successful', 'Successful', 'Successful']);
  expect(runs.map((r) => r.metadata.annotations?.[ANALYSIS_TEMPLATES_ANNOTATION])).toEqual([
    'AnalysisTemplate/success-rate',
    'AnalysisTemplate/success-rate',
    'AnalysisTemplate/success-rate',
  ]);
}, 240_000);

afterAll(async () => {
  await harness?.stop();
  await prometheus?.stop();
});

describe('rollgate plan --analysis --replay (three past runs in the sandbox)', () => {
  it('names the run a stricter template would have failed, with its measurement', async () => {
    const stricter = writeTemplate('stricter.yaml', 'result[0] >= 0.95');
    const result = await runCli(
      'plan',
      '--analysis',
      stricter,
      '--replay',
      '--kubeconfig',
      kubeconfig,
      '-n',
      NAMESPACE,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const blocks = result.stdout.split('\n\n');
    const failed = blocks.filter((b) => b.includes('replay:   Failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(
      /^web-[a-z0-9]+-3-1 \(Rollout web, revision 3, started \S+Z\)\n {2}recorded: Successful\n {2}replay: {3}Failed at measurement 1 of "success-rate" \(\S+Z, value \[0\.93\]\)\n {12}Metric "success-rate" assessed Failed due to failed \(1\) > failureLimit \(0\)/,
    );
    expect(result.stdout).toMatch(/1 of 3 run\(s\) would have ended differently\.\n$/);
  });

  it('says the same in JSON, and replays the template as it is to the recorded verdicts', async () => {
    const stricter = writeTemplate('stricter.yaml', 'result[0] >= 0.95');
    const json = await runCli(
      'plan',
      '--analysis',
      stricter,
      '--replay',
      '-o',
      'json',
      '--kubeconfig',
      kubeconfig,
      '-n',
      NAMESPACE,
    );
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as ReplayReport;
    expect(report.runs?.map((r) => [r.revision, r.recorded.phase, r.replay?.phase])).toEqual([
      ['2', 'Successful', 'Successful'],
      ['3', 'Successful', 'Failed'],
      ['4', 'Successful', 'Successful'],
    ]);
    expect(report.runs?.[1]?.replay?.deciding).toMatchObject({
      metric: 'success-rate',
      index: 1,
      value: '[0.93]',
    });

    const same = writeTemplate('same.yaml', 'result[0] >= 0.9');
    const asIs = JSON.parse(
      (
        await runCli(
          'plan',
          '--analysis',
          same,
          '--replay',
          '-o',
          'json',
          '--runs',
          '2',
          '--kubeconfig',
          kubeconfig,
          '-n',
          NAMESPACE,
        )
      ).stdout,
    ) as ReplayReport;
    expect(asIs.runs?.map((r) => [r.revision, r.replay?.phase])).toEqual([
      ['3', 'Successful'],
      ['4', 'Successful'],
    ]);
  });

  it('refuses flags that do not go together, and a template whose condition does not compile', async () => {
    const stricter = writeTemplate('stricter.yaml', 'result[0] >= 0.95');
    expect((await runCli('plan', '--analysis', stricter)).code).toBe(2);
    expect(
      (await runCli('plan', '--replay', '--analysis', stricter, '--runs', 'many', '--kubeconfig', kubeconfig))
        .stderr,
    ).toMatch(/--runs "many" must be a whole number/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      'apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata:\n  name: x\nspec:\n  metrics:\n    - name: m\n      successCondition: result >= \n      provider:\n        prometheus: { query: q }\n',
    );
    const refused = await runCli('plan', '--analysis', bad, '--replay', '--kubeconfig', kubeconfig);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bad\.yaml: spec\.metrics\[0\]\.successCondition: /);
  });
});

describe('rollgate plan --analysis --replay --from/--to (a Prometheus range)', () => {
  it('judges each window on what Prometheus held then', async () => {
    const metric = 'rollgate_test_replay_range_rate';
    const path = join(dir, 'range.yaml');
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 'range-rate' },
        spec: {
          args: [{ name: 'rollout' }],
          metrics: [
            {
              name: 'rate',
              successCondition: 'result[0] >= 0.9',
              provider: {
                prometheus: { address: prometheus.address, query: `${metric}{rollout="{{args.rollout}}"}` },
              },
            },
          ],
        },
      }),
    );
    const seen = async (value: number): Promise<string> => {
      prometheus.exporter.set(metric, value, { rollout: 'ranged' });
      await prometheus.waitFor(`${metric}{rollout="ranged"}`, (v) => v[0] === value);
      return new Date().toISOString();
    };
    const goodFrom = await seen(0.99);
    const badFrom = await seen(0.5);
    const replay = (from: string) =>
      runCli(
        'plan',
        '--analysis',
        path,
        '--replay',
        '--from',
        from,
        '--to',
        new Date(Date.parse(from) + 1000).toISOString(),
        '-a',
        'rollout=ranged',
        '-o',
        'json',
      );
    const good = JSON.parse((await replay(goodFrom)).stdout) as ReplayReport;
    expect(good.windows?.map((w) => w.replay?.phase)).toEqual(['Successful']);
    expect(good.windows?.[0]?.replay?.deciding).toMatchObject({ value: '[0.99]', time: goodFrom });
    const bad = await replay(badFrom);
    expect(bad.code).toBe(0);
    const report = JSON.parse(bad.stdout) as ReplayReport;
    expect(report.windows?.[0]?.replay).toMatchObject({
      phase: 'Failed',
      deciding: { metric: 'rate', index: 1, value: '[0.5]', time: badFrom },
    });
    // Without the argument the template cannot be built: the window says why.
    const missing = await runCli('plan', '--analysis', path, '--replay', '--from', badFrom, '-o', 'json');
    expect((JSON.parse(missing.stdout) as ReplayReport).windows?.[0]?.error).toMatch(/"rollout"/);
    expect((await runCli('plan', '--analysis', path, '--replay', '--from', 'yesterday')).code).toBe(2);
  });
});
