// A release: two Rollouts and a ConfigMap promoted as one pull request, opened only when both canaries
// finished in staging; its merge runs both prod canaries (forge double over a real repository, sandbox, Redis).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import {
  PROMOTION_REPO as REPO,
  startPromotionScene,
  type PromotionScene,
} from '../../support/promotion-scene.ts';
import { webRollout } from '../../support/web-rollout.ts';
import { toPlainObject } from '../../../src/kube/client.ts';
import { promoteRollout } from '../../../src/views/rollout-commands.ts';

/** `web` or `api` (the same Rollout under another name), the second step as given. */
const service = (name: 'web' | 'api', tag: string, secondStep?: string): string =>
  webRollout(`registry.example/web:${tag}`, secondStep ? { secondStep } : {}).replaceAll('web', name);
const configMap = (level: string): string =>
  `# shop settings\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: { name: shop }\r\ndata:\r\n  LOG_LEVEL: '${level}'   # per release\r\n`;

let scene: PromotionScene;

beforeAll(async () => {
  scene = await startPromotionScene({
    redisUrl: inject('redisUrl'),
    files: Object.fromEntries(
      ['staging', 'prod'].flatMap((env) => [
        [`envs/${env}/web.yaml`, service('web', '1.0.0')],
        [`envs/${env}/api.yaml`, service('api', '1.0.0')],
        [`envs/${env}/config/shop.yaml`, configMap('info')],
      ]),
    ),
    promotion: {
      from: { source: 'staging', rollouts: ['web', 'api'], together: true },
      files: [{ from: 'config' }],
    },
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
});

interface Live {
  spec: { template: { spec: { containers: Array<{ image: string }> } } };
  status?: { phase?: string; currentPodHash?: string; stableRS?: string; pauseConditions?: unknown[] };
}
const live = async (namespace: string, name: string): Promise<Live | undefined> =>
  toPlainObject<Live>(
    await scene.clients.custom
      .getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'rollouts',
        name,
      })
      .catch(() => undefined),
  ) ?? undefined;
const healthyAt = async (namespace: string, name: string, tag: string): Promise<boolean> => {
  const rollout = await live(namespace, name);
  return (
    rollout?.spec.template.spec.containers[0]?.image === `registry.example/${name}:${tag}` &&
    rollout.status?.phase === 'Healthy' &&
    rollout.status.stableRS === rollout.status.currentPodHash
  );
};

describe('a release of two Rollouts and a ConfigMap', () => {
  it('one pull request, opened only when both canaries finished, carrying the three edits; its merge runs both prod canaries', async () => {
    const { double, clients } = scene;
    await eventually('web and api Healthy in both environments', async () => {
      for (const env of ['staging', 'prod'])
        for (const name of ['web', 'api']) if (!(await healthyAt(env, name, '1.0.0'))) return false;
      return true;
    });
    const openPulls = () => [...double.repository(REPO).pulls.values()].filter((p) => p.state === 'open');

    // One staging commit: both images and the ConfigMap; api's canary waits at a pause until promoted (a timed
    // pause could end before a loaded machine shows web's status: it did once, at 6 s).
    const commit = await double.commit(REPO, 'main', {
      'envs/staging/web.yaml': service('web', '2.0.0'),
      'envs/staging/api.yaml': service('api', '2.0.0', 'pause: {}'),
      'envs/staging/config/shop.yaml': configMap('debug'),
    });
    // The promoter looked at web's finished canary (it posts web's status last in the look) while api still
    // walks its steps: no pull request.
    await eventually(
      "web's rollgate/staging success on the commit",
      () =>
        double
          .repository(REPO)
          .statuses.some(
            (s) => s.sha === commit && s.state === 'success' && (s.description ?? '').includes('staging/web'),
          ),
      { timeoutMs: 30_000 },
    );
    expect(await healthyAt('staging', 'api', '2.0.0')).toBe(false);
    expect(openPulls()).toEqual([]);

    // api's canary promoted once at its pause: when it finishes, the release goes out as one pull request.
    await eventually(
      "api's canary at its pause",
      async () => ((await live('staging', 'api'))?.status?.pauseConditions ?? []).length > 0,
      { timeoutMs: 30_000 },
    );
    await promoteRollout(clients, { namespace: 'staging', name: 'api' });
    const pull = await eventually('the release PR', () => openPulls()[0], { timeoutMs: 40_000 });
    expect(await healthyAt('staging', 'api', '2.0.0')).toBe(true);
    expect(openPulls()).toHaveLength(1);
    expect(pull.title).toBe('Release web 2.0.0, api 2.0.0');
    expect(pull.head).toBe('rollgate/promote/staging-to-prod/release');
    expect(pull.body).toContain('`registry.example/web:1.0.0` → `registry.example/web:2.0.0`');
    expect(pull.body).toContain('`registry.example/api:1.0.0` → `registry.example/api:2.0.0`');
    expect(pull.body).toContain('- `config/shop.yaml` modified');

    // The branch carries exactly the three edits; the ConfigMap byte for byte (CRLF, comments, quoting).
    const head = (await double.branchSha(REPO, pull.head)) ?? '';
    const changed = await double.gitIn(REPO, ['diff', '--name-only', 'main', head]);
    expect(changed.trim().split('\n').sort()).toEqual([
      'envs/prod/api.yaml',
      'envs/prod/config/shop.yaml',
      'envs/prod/web.yaml',
    ]);
    // The same blob as staging's: every byte copied.
    expect(await double.gitIn(REPO, ['rev-parse', `${head}:envs/prod/config/shop.yaml`])).toBe(
      await double.gitIn(REPO, ['rev-parse', `${commit}:envs/staging/config/shop.yaml`]),
    );

    // A reviewer merges it: prod runs both canaries to Healthy at 2.0.0, and the ConfigMap is applied.
    await scene.forge.client().merge(pull.number, head);
    await double.flushWebhooks();
    await eventually(
      'both prod canaries Healthy at 2.0.0',
      async () => (await healthyAt('prod', 'web', '2.0.0')) && (await healthyAt('prod', 'api', '2.0.0')),
      { timeoutMs: 40_000 },
    );
    const prodConfig = await clients.core.readNamespacedConfigMap({ namespace: 'prod', name: 'shop' });
    expect(prodConfig.data?.LOG_LEVEL).toBe('debug');
    expect(double.violations()).toEqual([]);
  }, 150_000);
});
