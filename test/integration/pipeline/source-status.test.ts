// The source status says what the sync of the branch's commit found, and keeps saying it: exactly one
// sync per new commit, however many polls and webhooks see that commit while it syncs.
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { KubeClients } from '../../../src/kube/client.ts';
import type { SourceStatus } from '../../../src/sync/source-status.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { rolloutYaml, startPipeline, type Pipeline } from './pipeline-harness.ts';

let pipeline: Pipeline | undefined;
let sampler: StatusSampler | undefined;
afterEach(async () => {
  await sampler?.stop();
  sampler = undefined;
  await pipeline?.stop();
  pipeline = undefined;
});

/** Every distinct `apps` status the ConfigMap held, read every 10 ms (as `kubectl get cm` would show it). */
interface StatusSampler {
  seen: SourceStatus[];
  latest(): SourceStatus | undefined;
  stop(): Promise<void>;
}

/**
 * The statuses a sync wrote, in order: the polls' health check writes the same status with its `health`
 * (looked at after each sync), which is not a sync's word on the commit.
 */
function syncStatuses(seen: readonly SourceStatus[]): Array<Omit<SourceStatus, 'health'>> {
  const distinct: Array<Omit<SourceStatus, 'health'>> = [];
  for (const status of seen) {
    const { health: _health, ...rest } = status;
    if (JSON.stringify(rest) !== JSON.stringify(distinct.at(-1))) distinct.push(rest);
  }
  return distinct;
}

function sampleStatus(clients: KubeClients): StatusSampler {
  const seen: SourceStatus[] = [];
  let last: string | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const text = await clients.core
        .readNamespacedConfigMap({ name: 'rollgate-source-apps', namespace: 'rollgate-system' })
        .then((cm) => cm.data?.['status'])
        .catch(() => undefined);
      if (text !== undefined && text !== last) {
        last = text;
        seen.push(JSON.parse(text) as SourceStatus);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    seen,
    latest: () => seen.at(-1),
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** A document that expands to 10⁴ nodes through aliases (refused past 100 expansions). */
const ALIAS_BOMB = `apiVersion: v1
kind: ConfigMap
metadata:
  name: bomb
data:
  a: &a [x, x, x, x, x, x, x, x, x, x]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
`;
/** A Helm template committed as is: not YAML. */
const HELM_TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  image: {{ .Values.image | quote }}
`;

describe('source status', () => {
  it('keeps a commit’s problems until a commit fixes them, with one sync per new commit', async () => {
    pipeline = await startPipeline(inject('redisUrl'));
    const p = pipeline;
    p.work.write({
      'bomb.yaml': ALIAS_BOMB,
      'chart.yaml': HELM_TEMPLATE,
      'web.yaml': rolloutYaml({ image: 'web:1.0', steps: '        - setWeight: 150\n' }),
      'config.yaml': configMapYaml('web-config', { a: '1' }),
    });
    const broken = p.work.commit('three problems');
    await p.work.push(p.repoUrl);
    sampler = sampleStatus(p.clients);
    // Polls every 200 ms keep seeing the commit while it syncs; at start the first scheduled poll runs
    // beside the start poll. Each used to add one more sync of the same commit, which wrote `Synced`.
    const running = await p.start({ interval: '200ms' });
    /** Waits until the process has polled `count` more times (each one a chance for a duplicate sync). */
    const morePolls = async (count: number): Promise<void> => {
      const from = await p.polls(running);
      await eventually(`${count} more polls`, async () => (await p.polls(running)) >= from + count, {
        intervalMs: 50,
      });
    };

    const degraded = await eventually('the status to list the problems', () =>
      sampler?.latest()?.phase === 'Degraded' ? sampler.latest() : undefined,
    );
    expect(degraded).toMatchObject({ commit: broken, lastSyncedAt: expect.any(String) as unknown });
    expect(degraded?.problems?.map((problem) => problem.file).sort()).toEqual([
      'bomb.yaml',
      'chart.yaml',
      'web.yaml',
    ]);
    const cm = await p.clients.core.readNamespacedConfigMap({ name: 'web-config', namespace: 'default' });
    expect(cm.data).toEqual({ a: '1' });
    await morePolls(6);
    expect(await p.syncJobs(running)).toBe(1);
    expect(syncStatuses(sampler.seen)).toEqual(syncStatuses([degraded!]));

    // A commit that leaves the broken files as they are: they are still listed.
    p.work.write({ 'config.yaml': configMapYaml('web-config', { a: '2' }) });
    const unrelated = p.work.commit('only the config');
    await p.work.push(p.repoUrl);
    expect((await p.pushWebhook(running)).status).toBe(202);
    const still = await eventually('the unrelated commit to be synced', () =>
      sampler?.latest()?.commit === unrelated ? sampler.latest() : undefined,
    );
    expect(still).toMatchObject({ phase: 'Degraded', problems: degraded?.problems });
    await morePolls(4);
    expect(await p.syncJobs(running)).toBe(2);

    p.work.write({
      'bomb.yaml': null,
      'chart.yaml': null,
      'web.yaml': rolloutYaml({ image: 'web:1.0' }),
    });
    const fixed = p.work.commit('problems fixed');
    await p.work.push(p.repoUrl);
    expect((await p.pushWebhook(running)).status).toBe(202);
    const synced = await eventually('the fixing commit to be synced', () =>
      sampler?.latest()?.commit === fixed ? sampler.latest() : undefined,
    );
    expect(synced).toMatchObject({ phase: 'Synced' });
    expect(synced).not.toHaveProperty('problems');
    await morePolls(4);
    expect(await p.syncJobs(running)).toBe(3);
    expect(syncStatuses(sampler.seen)).toEqual(syncStatuses([degraded!, still!, synced!]));
  });
});
