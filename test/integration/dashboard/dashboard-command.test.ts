// `rollgate dashboard --config FILE` (the shipped CLI in a child process): the local page shows the configured promotions.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PromotionsResponse } from '../../../src/server/dashboard/promotion-pipeline.ts';
import { eventually } from '../../support/eventually.ts';
import {
  startPromotionScene,
  webInBothEnvironments,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { liveWebRollout, webRollout } from '../../support/web-rollout.ts';

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'rollgate.js');

describe('rollgate dashboard --config', () => {
  let scene: PromotionScene;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    scene = await startPromotionScene({
      redisUrl: inject('redisUrl'),
      files: webInBothEnvironments(webRollout('registry.example/web:1.0.0')),
    });
  }, 60_000);
  afterAll(async () => {
    if (child?.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await scene?.stop();
  });

  it('serves the promotions of the configuration it was given, on 127.0.0.1', async () => {
    await eventually(
      'staging Healthy',
      async () => (await liveWebRollout(scene.clients, 'staging'))?.status?.phase === 'Healthy',
      { timeoutMs: 30_000 },
    );
    const kubeconfig = join(scene.tmp.path, 'kubeconfig');
    await scene.sandbox.writeKubeconfig(kubeconfig);
    // The same configuration Rollgate runs with (JSON is YAML), as a user would pass their file.
    const configFile = join(scene.tmp.path, 'rollgate.yaml');
    writeFileSync(configFile, JSON.stringify(scene.config));
    child = spawn(
      process.execPath,
      [BIN, 'dashboard', '--port', '0', '--kubeconfig', kubeconfig, '--config', configFile],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let printed = '';
    child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const printedUrl = await eventually(
      'the dashboard URL',
      () => /dashboard: (http:\/\/127\.0\.0\.1:\d+\/ui\/\?token=\S+)/.exec(printed)?.[1],
      {
        timeoutMs: 30_000,
      },
    );
    // The per-run token printed with the address reads, as the page would send it.
    const { origin: url, searchParams } = new URL(printedUrl);
    const body = (await (
      await fetch(`${url}/api/v1/promotions`, {
        headers: { authorization: `Bearer ${searchParams.get('token') ?? ''}` },
      })
    ).json()) as PromotionsResponse;
    expect(
      body.environments.map((e) => [e.source, e.rollouts.map((r) => `${r.namespace}/${r.name}`)]),
    ).toEqual([
      ['staging', ['staging/web']],
      ['prod', ['prod/web']],
    ]);
    expect(body.promotions.map((p) => [p.name, p.looks.map((l) => [l.rollout, l.error])])).toEqual([
      ['staging-to-prod', [['staging/web', undefined]]],
    ]);
  }, 90_000);
});
