// A source's failed sync tells its subscribers once (not once per poll) and marks the commit `failure`; the fix is `success`.
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { ForgeProvider } from '../../../src/forge/forge.ts';
import { startForgeDouble, type ForgeDouble } from '../../support/forge-double/forge-double.ts';
import { forgeOf, PROMOTION_REPO } from '../../support/promotion-scene.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml } from '../../support/git-fixtures.ts';
import { startServiceDoubles, type ServiceDoubles } from '../../support/notify/service-doubles.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';

const REPO = 'acme/apps';
const STATE_NAMESPACE = 'rollgate-system';
/**
 * The sources' poll interval. The tests wait for commits polled in and count polls ("many polls find the same
 * broken commit"); at 1 s those waits took two thirds of the file.
 */
const POLL_INTERVAL = '250ms';
const BROKEN = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata: [unclosed\n';

/** A webhook body that says trigger, source, phase, commit and the first problem, and the URL shown. */
const webhookTemplate = (path: string): string =>
  [
    'webhook:',
    '  hook:',
    '    method: POST',
    `    path: /${path}`,
    '    body: |',
    '      {"source": "{{.source.name}}", "phase": "{{.source.status.phase}}", "commit": "{{.source.status.commit}}",',
    '       "url": "{{.source.url}}", "problems": {{len .source.status.problems}},',
    '       "file": "{{range $i, $p := .source.status.problems}}{{if eq $i 0}}{{$p.file}}{{end}}{{end}}"}',
    '',
  ].join('\n');
const okTemplate = [
  'webhook:',
  '  hook:',
  '    method: POST',
  '    path: /succeeded',
  '    body: \'{"source": "{{.source.name}}", "commit": "{{.source.status.commit}}"}\'',
  '',
].join('\n');

let double: ForgeDouble | undefined;
let doubles: ServiceDoubles | undefined;
let scene: SystemScene | undefined;
let outageScene: SystemScene | undefined;
const providerScenes: SystemScene[] = [];
afterAll(async () => {
  await scene?.stop();
  await outageScene?.stop();
  for (const each of providerScenes) await each.stop();
  await doubles?.stop();
});

/** The notification ConfigMap: a webhook service `hook` and templates with its block. */
async function notificationConfigMap(scene: Pick<SystemScene, 'clients'>, hooksUrl: string): Promise<void> {
  const { clients } = scene;
  await clients.core
    .createNamespace({ body: { metadata: { name: STATE_NAMESPACE } } })
    .catch(() => undefined);
  await clients.core.createNamespacedConfigMap({
    namespace: STATE_NAMESPACE,
    body: {
      metadata: { name: 'rollgate-notification-configmap' },
      data: {
        'service.webhook.hook': `url: ${hooksUrl}/webhook\n`,
        // The built-in triggers, with templates of the ConfigMap's own (a webhook needs its block).
        'template.source-sync-failed': webhookTemplate('failed'),
        'template.source-sync-succeeded': okTemplate,
      },
    },
  });
}

const SUBSCRIBED = {
  'notifications.argoproj.io/subscribe.on-sync-failed.hook': '',
  'notifications.argoproj.io/subscribe.on-sync-succeeded.hook': '',
};

describe('source notifications and commit statuses', () => {
  it('one on-sync-failed and a failure status per broken commit over many polls; the fix is success', async () => {
    const hooks = (doubles = await startServiceDoubles());
    scene = await startSystemScene({
      name: 'notify-source',
      redisUrl: inject('redisUrl'),
      cluster: { sandbox: { readyDelayMs: 100 } },
      async prepare({ clients, defer }) {
        const started = (double = await startForgeDouble());
        defer(() => started.stop());
        await started.createRepository(REPO, {
          files: { 'apps/web.yaml': configMapYaml('web', { v: '1' }) },
        });
        await notificationConfigMap({ clients }, hooks.url);
      },
      rollgate: () => ({
        config: {
          sources: [
            {
              name: 'apps',
              // The double's Git URL carries its token: notifications must not show it.
              url: double!.gitUrl(REPO),
              branch: 'main',
              path: 'apps',
              interval: POLL_INTERVAL,
              notifications: SUBSCRIBED,
              commitStatus: {
                provider: 'github',
                apiUrl: double!.githubApiUrl,
                repository: REPO,
                token: double!.token,
                targetUrl: 'https://rollgate.example/sources/apps',
              },
            },
          ],
        },
      }),
    });
    const forge = double!;
    const { running, metrics } = scene.rollgate;
    const statuses = (sha: string) =>
      forge
        .repository(REPO)
        .statuses.filter((s) => s.sha === sha)
        .map((s) => `${s.context} ${s.state}: ${s.description ?? ''}`);
    const calls = (path: string) =>
      hooks.webhookCalls.filter((c) => c.path === `/webhook/${path}`).map((c) => c.json);
    const polls = async () => (await metrics.pollsTotal.get()).values.reduce((sum, v) => sum + v.value, 0);
    const drained = async () => {
      await running.poller?.reports.settled();
      await running.notifier?.settled();
      const counts = await running.notifier?.queue.queue.getJobCounts(
        'waiting',
        'active',
        'prioritized',
        'delayed',
      );
      return Object.values(counts ?? {}).every((count) => count === 0);
    };

    const first = forge.repository(REPO);
    const [firstSha] = await eventually('the first commit synced', async () => {
      const shas = [...new Set(first.statuses.map((s) => s.sha))];
      return shas.length === 1 ? shas : undefined;
    });
    await eventually('the first success notification', () => calls('succeeded').length === 1);
    // Pending once applied, success once the next poll found its objects healthy.
    await eventually('the first commit healthy', () => statuses(firstSha!).length === 2);
    expect(statuses(firstSha!)).toEqual([
      'rollgate/apps pending: applied, checking the health of its objects',
      'rollgate/apps success: applied, healthy',
    ]);
    expect(first.statuses[0]?.targetUrl).toBe('https://rollgate.example/sources/apps');

    const broken = await forge.commit(REPO, 'main', {
      'apps/web.yaml': configMapYaml('web', { v: '2' }),
      'apps/broken.yaml': BROKEN,
    });
    await eventually('the failure status on the broken commit', () => statuses(broken).length > 0);
    await eventually('the failure notification', () => calls('failed').length > 0);
    // Many more polls find the same broken commit: nothing more is sent or posted.
    const seen = await polls();
    await eventually('five more polls', async () => (await polls()) >= seen + 5, { timeoutMs: 30_000 });
    await eventually('everything enqueued sent', drained);
    expect(statuses(broken)).toEqual([
      expect.stringMatching(/^rollgate\/apps failure: 1 object\(s\) not applied: apps\/broken\.yaml:\d+: /),
    ]);
    expect(calls('failed')).toEqual([
      {
        source: 'apps',
        phase: 'Degraded',
        commit: broken,
        url: `${forge.url}/${REPO}.git`,
        problems: 1,
        file: 'apps/broken.yaml',
      },
    ]);
    expect(JSON.stringify(hooks.webhookCalls.map((c) => c.body))).not.toContain(forge.token);

    const fixed = await forge.commit(REPO, 'main', { 'apps/broken.yaml': null });
    await eventually('the success status on the fixing commit', () => statuses(fixed).length > 0);
    await eventually('the second success notification', () => calls('succeeded').length === 2);
    await eventually('everything enqueued sent', drained);
    await eventually('the fixing commit healthy', () => statuses(fixed).length === 2);
    expect(statuses(fixed)).toEqual([
      'rollgate/apps pending: applied, checking the health of its objects',
      'rollgate/apps success: applied, healthy',
    ]);
    expect(calls('succeeded')).toEqual([
      { source: 'apps', commit: firstSha },
      { source: 'apps', commit: fixed },
    ]);
    expect(calls('failed')).toHaveLength(1);
  }, 120_000);

  it('Git down for many polls of two processes: one on-sync-failed; Git back: one on-sync-succeeded', async () => {
    const hooks = doubles ?? (doubles = await startServiceDoubles());
    hooks.requests.length = 0;
    const outage = (outageScene = await startSystemScene({
      name: 'notify-source-outage',
      redisUrl: inject('redisUrl'),
      cluster: { sandbox: { readyDelayMs: 100 } },
      repositories: ['apps'],
      prepare: (prepared) => notificationConfigMap(prepared, hooks.url),
    }));
    const work = outage.workingCopy();
    work.write({ 'web.yaml': configMapYaml('web', { v: '1' }) });
    const commit = work.commit('first');
    await work.push(outage.repoUrl());
    const config = {
      workers: { lockDurationMs: 30_000 },
      sources: [
        {
          name: 'apps',
          url: outage.repoUrl(),
          branch: 'main',
          interval: POLL_INTERVAL,
          notifications: SUBSCRIBED,
        },
      ],
    };
    // Two processes on one Redis: whichever polls or syncs, a transition is told once.
    const processes = [await outage.startRollgate({ config }), await outage.startRollgate({ config })];
    const calls = (path: string) =>
      hooks.webhookCalls.filter((c) => c.path === `/webhook/${path}`).map((c) => c.json);
    const polls = async () => {
      let sum = 0;
      for (const { metrics } of processes)
        sum += (await metrics.pollsTotal.get()).values.reduce((total, v) => total + v.value, 0);
      return sum;
    };
    const drained = async () => {
      for (const { running } of processes) {
        await running.poller?.reports.settled();
        await running.notifier?.settled();
      }
      const counts = await processes[0]!.running.notifier?.queue.queue.getJobCounts(
        'waiting',
        'active',
        'prioritized',
        'delayed',
      );
      return Object.values(counts ?? {}).every((count) => count === 0);
    };
    const phase = async () => {
      const cm = await outage.clients.core.readNamespacedConfigMap({
        name: 'rollgate-source-apps',
        namespace: STATE_NAMESPACE,
      });
      return (JSON.parse(cm.data?.['status'] ?? '{}') as { phase?: string }).phase;
    };

    await eventually('the first success notification', () => calls('succeeded').length === 1);
    outage.git!.setDown(true);
    await eventually('the source to fail', async () => (await phase()) === 'Failed');
    const seen = await polls();
    await eventually('five more polls', async () => (await polls()) >= seen + 5, { timeoutMs: 30_000 });
    await eventually('everything enqueued sent', drained);
    expect(calls('failed')).toEqual([
      { source: 'apps', phase: 'Failed', commit, url: outage.repoUrl(), problems: 0, file: '' },
    ]);

    outage.git!.setDown(false);
    await eventually('the source to recover', async () => (await phase()) === 'Synced');
    await eventually('the recovery notification', () => calls('succeeded').length === 2);
    const after = await polls();
    await eventually('three more polls', async () => (await polls()) >= after + 3, { timeoutMs: 30_000 });
    await eventually('everything enqueued sent', drained);
    expect(calls('succeeded')).toEqual([
      { source: 'apps', commit },
      { source: 'apps', commit },
    ]);
    expect(calls('failed')).toHaveLength(1);
  }, 120_000);

  it.each<ForgeProvider>(['gitlab', 'gitea'])(
    "posts the commit statuses through %s's API as well",
    async (provider) => {
      const hooks = doubles ?? (doubles = await startServiceDoubles());
      let mounted: ReturnType<typeof forgeOf> | undefined;
      let forgeDouble: ForgeDouble | undefined;
      const each = await startSystemScene({
        name: `notify-source-${provider}`,
        redisUrl: inject('redisUrl'),
        cluster: { sandbox: { readyDelayMs: 100 } },
        async prepare({ clients, defer }) {
          const started = (forgeDouble = await startForgeDouble());
          defer(() => started.stop());
          await started.createRepository(PROMOTION_REPO, {
            files: { 'apps/web.yaml': configMapYaml('web', { v: '1' }) },
          });
          mounted = forgeOf(started, provider);
          await notificationConfigMap({ clients }, hooks.url);
        },
        rollgate: () => ({
          config: {
            sources: [
              {
                name: 'apps',
                url: forgeDouble!.gitUrl(PROMOTION_REPO),
                branch: 'main',
                path: 'apps',
                interval: POLL_INTERVAL,
                commitStatus: {
                  provider,
                  apiUrl: mounted!.apiUrl,
                  repository: PROMOTION_REPO,
                  token: mounted!.token,
                },
              },
            ],
          },
        }),
      });
      providerScenes.push(each);
      const states = (sha: string) => mounted!.statuses(sha).map((s) => `${s.context} ${s.state}`);
      const syncedCommit = async () =>
        (
          await each.clients.core.readNamespacedConfigMap({
            name: 'rollgate-source-apps',
            namespace: STATE_NAMESPACE,
          })
        ).data?.['commit'];
      const first = await eventually('the first sync', syncedCommit);
      await eventually('its status, once its objects were found healthy', () => states(first).length === 2);
      const broken = await forgeDouble!.commit(PROMOTION_REPO, 'main', { 'apps/broken.yaml': BROKEN });
      await eventually('the failure status', () => states(broken).length > 0);
      await each.rollgate.running.poller?.reports.settled();
      expect(states(first)).toEqual(['rollgate/apps pending', 'rollgate/apps success']);
      // Read back in the scene's common words (GitLab's double took it as its own `failed`, the only word
      // its API description allows).
      expect(states(broken)).toEqual(['rollgate/apps failure']);
    },
    120_000,
  );
});
