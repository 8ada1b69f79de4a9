// Kustomizations Rollgate cannot or will not render, at the sync level: one source of two apps, one broken by a push that also changes the other.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { eventually } from '../../support/eventually.ts';
import { overlayKustomization, webLayout } from '../../support/kustomize-layout.ts';
import { startPipeline, type LiveRollout, type Pipeline } from './pipeline-harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STAGING = 'apps/web/overlays/staging';
const STAGING_FILE = `${STAGING}/kustomization.yaml`;
/** Staging's kustomization with its tag moved on (so a render that got through would change the Rollout). */
const movedStaging = (extra = ''): string => overlayKustomization('staging', '9.9', extra);

/**
 * The output cap the pipelines run with: the product's default is 16 MiB, but what is tested is the cap, not
 * its size, and kustomize builds its whole output before it prints any (~7 s of CPU for 50 MiB, twice per
 * case): a 1 MiB cap and ~5 MiB of output test the same stop for a tenth of it.
 */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/** 10 copies (name-prefixed) of a 512 KiB ConfigMap: ~5 MiB of output, 5× the cap, from 512 KiB of input. */
function fiveMegabytes(): Record<string, string> {
  const files: Record<string, string> = {
    [`${STAGING}/big/blob/kustomization.yaml`]: 'resources: [configmap.yaml]\n',
    [`${STAGING}/big/blob/configmap.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata: {name: blob}
data:
  blob: ${'abcdefgh'.repeat(64 * 1024)}
`,
  };
  for (let i = 0; i < 10; i += 1)
    files[`${STAGING}/big/copy-${i}/kustomization.yaml`] = `resources: [../blob]\nnamePrefix: copy-${i}-\n`;
  files[`${STAGING}/big/kustomization.yaml`] =
    `resources:\n${Array.from({ length: 10 }, (_, i) => `  - copy-${i}\n`).join('')}`;
  return files;
}

interface BadInput {
  name: string;
  /** The push's files for staging (prod's change is added by the test). */
  files: () => Record<string, string | null>;
  /** Where the problem is reported, and what it says. */
  file: string;
  message: RegExp;
}

/** A server counting requests: a remote base must never reach it. */
async function countingServer(): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests += 1;
    res.end('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

let remote: { url: string; requests: () => number } | undefined;

/**
 * render.kustomize.timeoutSeconds of the pipelines. The over-the-cap case checks the output limit, not the
 * load: when it rendered ~50 MB (~7 s of CPU a render), at a load average of 13-17 one render ran past the
 * default 30 s and was stopped by the timeout instead. Its ~5 MB now take a tenth of that; the margin stays.
 */
const RENDER_TIMEOUT_SECONDS = 120;

const CASES: BadInput[] = [
  {
    name: 'a missing resource',
    files: () => ({
      [STAGING_FILE]: movedStaging().replace('  - ../../base\n', '  - ../../base\n  - missing.yaml\n'),
    }),
    file: STAGING_FILE,
    message: /^kustomize build apps\/web\/overlays\/staging: .*missing\.yaml/,
  },
  {
    name: 'a patch whose target is not there',
    files: () => ({
      [`${STAGING}/replicas.yaml`]:
        'apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: api\nspec:\n  replicas: 3\n',
      [STAGING_FILE]: movedStaging(),
    }),
    file: STAGING_FILE,
    message: /^kustomize build apps\/web\/overlays\/staging: .*no matches for Id Rollout.*\/api/,
  },
  {
    name: 'a remote base',
    files: () => ({
      [STAGING_FILE]: movedStaging().replace(
        '  - ../../base\n',
        `  - ../../base\n  - ${remote?.url ?? ''}/base?ref=v1\n`,
      ),
    }),
    file: STAGING_FILE,
    message: /^resources: http:\/\/127\.0\.0\.1:\d+\/base\?ref=v1 is a URL: Rollgate renders only/,
  },
  {
    name: 'a path outside the repository',
    files: () => ({
      [STAGING_FILE]: movedStaging().replace('  - ../../base\n', '  - ../../base\n  - ../../../../../etc\n'),
    }),
    file: STAGING_FILE,
    message: /^resources: \.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc leaves the repository$/,
  },
  {
    name: 'helmCharts',
    files: () => ({
      [STAGING_FILE]: movedStaging(
        'helmCharts:\n  - name: redis\n    repo: https://charts.example.com\n    version: 1.0.0\n',
      ),
    }),
    file: STAGING_FILE,
    message: /^helmCharts: Rollgate does not inflate Helm charts in a kustomization/,
  },
  {
    name: 'a Chart.yaml in the app',
    files: () => ({
      [`${STAGING}/Chart.yaml`]: 'apiVersion: v2\nname: web\nversion: 0.1.0\n',
      [STAGING_FILE]: movedStaging(),
    }),
    file: `${STAGING}/Chart.yaml`,
    message: /^a Helm chart: Rollgate does not render Helm/,
  },
  {
    name: 'a kustomization rendering ~5 MB over a 1 MiB cap',
    files: () => ({
      ...fiveMegabytes(),
      [STAGING_FILE]: movedStaging().replace('  - ../../base\n', '  - ../../base\n  - big\n'),
    }),
    file: STAGING_FILE,
    message: new RegExp(
      `^kustomize build apps/web/overlays/staging: kustomize output passed ${MAX_OUTPUT_BYTES} bytes and was stopped \\(render\\.kustomize\\.maxOutputBytes\\)$`,
    ),
  },
];

const imageOf = (rollout: LiveRollout | undefined): string | undefined =>
  rollout?.spec?.template?.spec?.containers?.[0]?.image;

/** What a user would see change of staging's objects: each one's identity, spec or data, labels and annotations. */
async function stagingObjects(p: Pipeline): Promise<unknown> {
  const core = p.clients.core;
  const rollout = (await p.rollout('staging-web')) as
    (LiveRollout & { metadata: { generation?: number; uid?: string } }) | undefined;
  const service = await core.readNamespacedService({ name: 'staging-web', namespace: 'default' });
  const configMaps = (await core.listNamespacedConfigMap({ namespace: 'default' })).items.filter((cm) =>
    cm.metadata?.name?.startsWith('staging-'),
  );
  return {
    rollout: {
      uid: rollout?.metadata.uid,
      generation: rollout?.metadata.generation,
      spec: rollout?.spec,
      labels: rollout?.metadata.labels,
    },
    service: { uid: service.metadata?.uid, rv: service.metadata?.resourceVersion, spec: service.spec },
    configMaps: configMaps.map((cm) => ({
      name: cm.metadata?.name,
      uid: cm.metadata?.uid,
      rv: cm.metadata?.resourceVersion,
    })),
  };
}

async function sourceStatus(p: Pipeline): Promise<SourceStatus> {
  const state = await p.clients.core.readNamespacedConfigMap({
    name: 'rollgate-source-web',
    namespace: 'rollgate-system',
  });
  return JSON.parse(state.data?.['status'] ?? '{}') as SourceStatus;
}

describe('a source of two kustomize apps, one broken by a push', () => {
  it.each(CASES)(
    "$name: a problem at the file with the message; the other app's change is applied; nothing of the broken app changes; putting it back clears the problem",
    async (bad) => {
      remote = await countingServer();
      const p = await startPipeline(inject('redisUrl'));
      cleanups.push(() => p.stop());
      p.work.write(webLayout());
      p.work.commit('the web app, base and two overlays');
      await p.work.push(p.repoUrl);
      const running = await p.start({
        sources: [{ name: 'web', path: 'apps/web' }],
        prune: true,
        kustomize: { timeoutSeconds: RENDER_TIMEOUT_SECONDS, maxOutputBytes: MAX_OUTPUT_BYTES },
      });
      for (const env of ['staging', 'prod'])
        await eventually(`${env}-web to be Healthy`, async () => {
          return (await p.rollout(`${env}-web`))?.status?.phase === 'Healthy';
        });
      const before = await stagingObjects(p);

      p.work.write({
        ...bad.files(),
        'apps/web/overlays/prod/kustomization.yaml': overlayKustomization('prod', '2.0'),
      });
      const commit = p.work.commit(`staging: ${bad.name}; prod: nginx 2.0`);
      await p.work.push(p.repoUrl);
      // The process that syncs is this one (the harness runs Rollgate in the test's process).
      const baseline = process.memoryUsage().rss;
      let peak = baseline;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 10);
      let status: SourceStatus;
      try {
        await p.pushWebhook(running);
        status = await eventually(
          'the source to sync the commit',
          async () => {
            const now = await sourceStatus(p);
            return now.commit === commit ? now : undefined;
          },
          { timeoutMs: 90_000 },
        );
      } finally {
        clearInterval(sampler);
      }
      const grewMb = (peak - baseline) / (1024 * 1024);
      console.log(
        `[kustomize-bad-input] ${bad.name}: RSS baseline ${(baseline / 2 ** 20).toFixed(0)} MiB, peak ${(peak / 2 ** 20).toFixed(0)} MiB (+${grewMb.toFixed(0)} MiB)`,
      );
      expect(grewMb).toBeLessThan(400);

      expect(status.phase).toBe('Degraded');
      expect(status.problems).toEqual([
        { file: bad.file, line: expect.any(Number), message: expect.stringMatching(bad.message) },
      ]);
      expect(remote.requests()).toBe(0);
      // The other app's change of the same push went through, and its canary started.
      const prod = await eventually("prod's canary", async () => {
        const r = await p.rollout('prod-web');
        return r?.status?.phase === 'Paused' ? r : undefined;
      });
      expect(imageOf(prod)).toBe('nginx:2.0');
      // Staging runs what it ran: same objects (not recreated, not pruned), same specs, no new ReplicaSet.
      expect(await stagingObjects(p)).toEqual(before);
      expect(imageOf(await p.rollout('staging-web'))).toBe('nginx:1.1');
      expect((await p.replicaSets()).filter((rs) => rs.name.startsWith('staging-web-'))).toHaveLength(1);

      // Staging put back as it was: the problem leaves the status.
      const layout: Record<string, string> = webLayout();
      const restore = Object.fromEntries(
        Object.keys(bad.files()).map((path) => [path, layout[path] ?? null]),
      );
      p.work.write(restore);
      const fixed = p.work.commit('staging: back to what it was');
      await p.work.push(p.repoUrl);
      await p.pushWebhook(running);
      // The fix's old side is the broken commit, rendered again (the over-the-cap case until its limit kills it).
      const recovered = await eventually(
        'the source to sync the fix',
        async () => {
          const now = await sourceStatus(p);
          return now.commit === fixed ? now : undefined;
        },
        { timeoutMs: 90_000 },
      );
      expect(recovered.phase).toBe('Synced');
      expect(recovered.problems).toBeUndefined();
      expect(imageOf(await p.rollout('staging-web'))).toBe('nginx:1.1');
    },
    240_000,
  );
});
