// `rollgate list rollouts` and `get rollout` over a cluster with Rollouts in both groups (controller mode beside rollgate.dev):
// both listed, twins told apart by a GROUP column, `get` finds an argoproj.io Rollout and shows its argoproj.io AnalysisRuns.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RolloutListRow, RolloutTree } from '../../../src/views/rollout-tree.ts';
import { runCli } from '../../support/run-cli.ts';
import {
  NAMESPACE,
  startControllerScene,
  type ControllerScene,
} from '../controller-mode/controller-scene.ts';

let scene: ControllerScene;
let metricServer: Server;

beforeAll(async () => {
  metricServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rate: 0.99 }));
  });
  await new Promise<void>((resolve) => metricServer.listen(0, '127.0.0.1', resolve));
  const address = metricServer.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  scene = await startControllerScene({
    redisUrl: inject('redisUrl'),
    groups: ['rollgate.dev', 'argoproj.io'],
    role: 'reconciler',
  });
  await scene.create('argoproj.io', 'analysistemplates', {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name: 'success-rate', namespace: NAMESPACE },
    spec: {
      metrics: [
        {
          name: 'rate',
          count: 1,
          successCondition: 'result >= 0.95',
          provider: { web: { url: `http://127.0.0.1:${port}/rate`, jsonPath: '{$.rate}' } },
        },
      ],
    },
  });
  const twinSteps = [{ setWeight: 50 }, { pause: {} }];
  await scene.createCanary('rollgate.dev', 'twin', 'twin-rg', twinSteps);
  await scene.createCanary('argoproj.io', 'twin', 'twin-argo', twinSteps);
  await scene.createCanary('argoproj.io', 'shop', 'shop', [
    { setWeight: 25 },
    { analysis: { templates: [{ templateName: 'success-rate' }] } },
    { pause: {} },
  ]);
  const shop = await scene.healthy('argoproj.io', 'shop');
  await scene.healthy('argoproj.io', 'twin');
  await scene.healthy('rollgate.dev', 'twin');
  // A second revision of the argoproj.io shop: measured by its analysis step, then paused at step 2.
  await scene.setImage('argoproj.io', 'shop', 'shop/shop:2');
  await scene.pausedAt('argoproj.io', 'shop', 2);
  expect(shop.status?.stableRS).toBeDefined();
}, 120_000);

afterAll(async () => {
  await scene?.stop();
  await new Promise<void>((resolve) => metricServer?.close(() => resolve()));
});

describe('list rollouts / get rollout across rollgate.dev and argoproj.io', () => {
  it('lists the Rollouts of both groups; the twins of one name are two rows, told apart by GROUP', async () => {
    const listed = await runCli('list', 'rollouts', '--kubeconfig', scene.kubeconfig);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const rows = listed.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/ {2,}/));
    expect(rows[0]?.slice(0, 4)).toEqual(['NAME', 'GROUP', 'STRATEGY', 'STATUS']);
    expect(rows.slice(1).map((row) => [row[0], row[1], row[3]])).toEqual([
      ['shop', 'argoproj.io', '॥ Paused'],
      ['twin', 'argoproj.io', '✔ Healthy'],
      ['twin', 'rollgate.dev', '✔ Healthy'],
    ]);

    const json = await runCli('list', 'rollouts', '-A', '-o', 'view-json', '--kubeconfig', scene.kubeconfig);
    const items = JSON.parse(json.stdout) as RolloutListRow[];
    expect(items.map((row) => `${row.group} ${row.name} ${row.step}`)).toEqual([
      'argoproj.io shop 2/3',
      'argoproj.io twin 2/2',
      'rollgate.dev twin 2/2',
    ]);
  });

  it('get rollout finds an argoproj.io Rollout by name and shows its argoproj.io AnalysisRun under its revision', async () => {
    const text = await runCli('get', 'rollout', 'shop', '--kubeconfig', scene.kubeconfig);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^Name: +shop\nNamespace: +default\nStatus: +॥ Paused\n/);
    expect(text.stdout).toMatch(
      /├──# revision:2\n(│ .*\n)*│ {2}└──α shop-\w+-\d+-\d+ +AnalysisRun +✔ Successful/,
    );

    const json = await runCli('get', 'rollout', 'shop', '-o', 'view-json', '--kubeconfig', scene.kubeconfig);
    const tree = JSON.parse(json.stdout) as RolloutTree;
    expect(tree.step).toEqual({ index: 2, count: 3 });
    const [newest] = tree.revisions;
    expect(newest?.analysisRuns.map((run) => run.status)).toEqual(['Successful']);
  });

  it('status finds the argoproj.io Rollout too, with its analysis run', async () => {
    const status = await runCli('status', 'shop', '--kubeconfig', scene.kubeconfig);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).toMatch(/^Name: +shop\n/);
    expect(status.stdout).toMatch(/AnalysisRuns:\n {2}shop-\w+-\d+-\d+ \(step 1\) {2}Successful/);
    const ambiguous = await runCli('status', 'twin', '--kubeconfig', scene.kubeconfig);
    expect(ambiguous.stderr).toContain('--group');
    const named = await runCli('status', 'twin', '--group', 'argoproj.io', '--kubeconfig', scene.kubeconfig);
    expect(named.code).toBe(0);
  });

  it('get rollout of a name in both groups asks for --group, and shows the one --group names', async () => {
    const ambiguous = await runCli('get', 'rollout', 'twin', '--kubeconfig', scene.kubeconfig);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('exists in both rollgate.dev and argoproj.io');
    expect(ambiguous.stderr).toContain('--group');

    for (const group of ['argoproj.io', 'rollgate.dev'] as const) {
      const shown = await runCli(
        'get',
        'rollout',
        'twin',
        '--group',
        group,
        '-o',
        'view-json',
        '--kubeconfig',
        scene.kubeconfig,
      );
      expect(shown.code).toBe(0);
      const tree = JSON.parse(shown.stdout) as RolloutTree;
      const app = group === 'argoproj.io' ? 'twin-argo' : 'twin-rg';
      // Each tree is its own Rollout's: its ReplicaSets run its own image.
      expect(tree.images).toEqual([{ image: `shop/${app}:1`, roles: ['stable'] }]);
    }

    const missing = await runCli(
      'get',
      'rollout',
      'shop',
      '--group',
      'rollgate.dev',
      '--kubeconfig',
      scene.kubeconfig,
    );
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'rollgate: rollout default/shop not found in rollgate.dev\n',
    });
  });
});
