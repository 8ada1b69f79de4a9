// The dashboard's JSON API on a running Rollgate: list, detail, the live stream, the verbs, and who may do what.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.ts';
import { systemClock } from '../../../src/clock/clock.ts';
import { runGetRollout } from '../../../src/cli/get-rollout.ts';
import { runListRollouts } from '../../../src/cli/list-rollouts.ts';
import type { PromotionsResponse } from '../../../src/server/dashboard/promotion-pipeline.ts';
import { wireDashboard } from '../../../src/process/dashboard-wiring.ts';
import type { DashboardAccess } from '../../../src/server/dashboard/dashboard-access.ts';
import { startDashboardServer } from '../../../src/server/dashboard/dashboard-server.ts';
import type { RolloutDetail } from '../../../src/server/dashboard/rollout-reads.ts';
import type { RolloutSummary } from '../../../src/server/dashboard/rollout-summary.ts';
import { eventually } from '../../support/eventually.ts';
import { ACTION_TOKEN, READ_TOKEN, startDashboardScene, type DashboardScene } from './dashboard-scene.ts';
import { openEventStream } from './sse-reader.ts';

const read = { authorization: `Bearer ${READ_TOKEN}` };
const act = { authorization: `Bearer ${ACTION_TOKEN}` };

describe('dashboard API', () => {
  let scene: DashboardScene;
  beforeAll(async () => {
    scene = await startDashboardScene(inject('redisUrl'));
    await scene.createCanary('web', 'app:1.0');
    await eventually('web healthy', async () => (await scene.rollout('web')).status?.phase === 'Healthy', {
      timeoutMs: 40_000,
    });
  }, 90_000);
  afterAll(async () => {
    await scene?.stop();
  });

  const get = (path: string, headers: Record<string, string> = read): Promise<Response> =>
    fetch(`${scene.url}${path}`, { headers });

  it('refuses reads without the read token (401, no cookie) and lists every rollout with it', async () => {
    const none = await get('/api/v1/rollouts', {});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(none.headers.get('set-cookie')).toBeNull();
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('dashboard.unauthorized');
    expect((await get('/api/v1/rollouts', { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await get('/api/v1/rollouts/default/web', {})).status).toBe(401);
    expect((await get('/api/v1/events', {})).status).toBe(401);
    // The actions token reads too, so the page needs one token.
    expect((await get('/api/v1/rollouts', act)).status).toBe(200);

    const ok = await get('/api/v1/rollouts');
    expect(ok.status).toBe(200);
    const { items } = (await ok.json()) as { items: RolloutSummary[] };
    const web = items.find((r) => r.name === 'web');
    expect(web).toMatchObject({
      namespace: 'default',
      status: 'Healthy',
      strategy: 'Canary',
      step: '4/4',
      stepIndex: 4,
      stepCount: 4,
      actualWeight: 100,
      images: { stable: ['app:1.0'], canary: [] },
      ready: 2,
      desired: 2,
      source: 'apps',
    });
    expect(web?.createdAt).toMatch(/^\d{4}-/);
  });

  it('answers what `rollgate list rollouts` and `rollgate get rollout` print: one model, no second source of truth', async () => {
    const printed = async (
      run: (output: Parameters<typeof runListRollouts>[4]) => Promise<number>,
    ): Promise<unknown> => {
      let text = '';
      const output = {
        stdout: { write: (t: string) => (text += t) },
        stderr: { write: () => true },
        terminal: false,
        now: () => new Date(),
      };
      expect(await run(output)).toBe(0);
      return JSON.parse(text);
    };
    const rows = (await printed((o) =>
      runListRollouts(scene.clients, 'default', false, { output: 'view-json' }, o),
    )) as Array<Record<string, unknown>>;
    const tree = await printed((o) =>
      runGetRollout(scene.clients, { namespace: 'default', name: 'web' }, { output: 'view-json' }, o),
    );
    const { items } = (await (await get('/api/v1/rollouts')).json()) as { items: RolloutSummary[] };
    const detail = (await (await get('/api/v1/rollouts/default/web')).json()) as RolloutDetail;
    // Every column the CLI lists is in the API's row, with the same value; the detail's tree is get's -o view-json.
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(items.find((i) => i.name === row.name)).toMatchObject(row);
    expect(detail.tree).toEqual(tree);
  });

  it('serves /api/v1/promotions behind the read token; without sources it has nothing to show', async () => {
    expect((await get('/api/v1/promotions', {})).status).toBe(401);
    const res = await get('/api/v1/promotions');
    expect(res.status).toBe(200);
    expect((await res.json()) as PromotionsResponse).toEqual({
      environments: [],
      promotions: [],
      history: [],
    });
  });

  it('streams a change to a paused canary, shows it in full, and a POST promote moves it on', async () => {
    const stream = await openEventStream(`${scene.url}/api/v1/events`, read);
    expect(stream.status).toBe(200);
    try {
      await scene.setImage('web', 'app:2.0');
      const paused = await stream.next((e) => {
        const r = (e.data as { rollout?: RolloutSummary }).rollout;
        return e.event === 'rollout' && r?.name === 'web' && r.status === 'Paused' && r.stepIndex === 1;
      }, 30_000);
      expect((paused.data as { rollout: RolloutSummary }).rollout.images).toEqual({
        stable: ['app:1.0'],
        canary: ['app:2.0'],
      });

      const detail = (await (await get('/api/v1/rollouts/default/web')).json()) as RolloutDetail;
      expect(detail.view.steps.map((s) => s.state)).toEqual(['done', 'current', 'pending', 'pending']);
      expect(detail.view.weights).toEqual({ canary: 25, stable: 75 });
      expect(detail.view.pauseConditions[0]?.reason).toBe('CanaryPauseStep');
      // Revisions are ordered by creation time, to the second: two made in one second may come either way.
      expect(detail.tree.revisions.map((r) => r.replicaSets[0]?.role).sort()).toEqual(['canary', 'stable']);
      expect(detail.tree.revisions.every((r) => (r.replicaSets[0]?.pods.length ?? 0) > 0)).toBe(true);
      expect(Array.isArray(detail.view.analysisRunDetails)).toBe(true);
      expect(detail.view.conditions.length).toBeGreaterThan(0);
      expect((await get('/api/v1/rollouts/default/nope')).status).toBe(404);

      const promote = (headers: Record<string, string>): Promise<Response> =>
        fetch(`${scene.url}/api/v1/rollouts/default/web/promote`, { method: 'POST', headers });
      // The read token is not the actions token.
      expect((await promote(read)).status).toBe(401);
      expect((await promote({})).status).toBe(401);
      expect((await scene.rollout('web')).status?.currentStepIndex).toBe(1);

      const done = await promote(act);
      expect(done.status).toBe(200);
      expect(((await done.json()) as { summary: string }).summary).toContain('promoted (pause cleared)');
      await stream.next((e) => {
        const r = (e.data as { rollout?: RolloutSummary }).rollout;
        return r?.name === 'web' && r.status === 'Paused' && r.stepIndex === 3;
      }, 30_000);

      const after = (await (await get('/api/v1/rollouts/default/web')).json()) as RolloutDetail;
      expect(after.view.weights.canary).toBe(50);
      const event = after.events.find((e) => e.reason === 'DashboardAction');
      expect(event?.message).toMatch(/^promote from .+: rollout web promoted \(pause cleared\)$/);

      expect(
        (await fetch(`${scene.url}/api/v1/rollouts/default/web/explode`, { method: 'POST', headers: act }))
          .status,
      ).toBe(404);
      expect((await fetch(`${scene.url}/api/v1/rollouts/default/web/promote`, { headers: act })).status).toBe(
        405,
      );
    } finally {
      stream.close();
    }
  }, 90_000);

  /** A second dashboard on the scene's cluster, wired as `options` say; stopped once `use` settles. */
  async function withDashboard(
    options: { access: DashboardAccess; namespace?: string },
    use: (url: string) => Promise<void>,
  ): Promise<void> {
    const dashboard = wireDashboard({
      clients: scene.clients,
      clock: systemClock,
      logger: silentLogger,
      ...options,
    });
    const server = await startDashboardServer({
      dashboard,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
    try {
      await use(server.url);
    } finally {
      await server.stop();
    }
  }

  it('answers every verb 403 when actions are disabled, even with a token', async () => {
    await withDashboard({ access: { openReads: true, actions: { enabled: false } } }, async (url) => {
      for (const verb of ['promote', 'promote-full', 'abort', 'retry', 'restart', 'pause', 'resume']) {
        const res = await fetch(`${url}/api/v1/rollouts/default/web/${verb}`, {
          method: 'POST',
          headers: act,
        });
        expect(res.status, verb).toBe(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          'dashboard.actions_disabled',
        );
      }
      // No read token configured: reads are open.
      expect((await fetch(`${url}/api/v1/rollouts`)).status).toBe(200);
      expect((await scene.rollout('web')).status?.currentStepIndex).toBe(3);
    });
  });

  it('keeps to kubernetes.watchNamespace: other namespaces are neither listed, shown nor acted on', async () => {
    await withDashboard(
      { access: { openReads: true, actions: { enabled: true, token: ACTION_TOKEN } }, namespace: 'team-a' },
      async (url) => {
        const { items } = (await (await fetch(`${url}/api/v1/rollouts`)).json()) as {
          items: RolloutSummary[];
        };
        expect(items).toEqual([]);
        expect((await fetch(`${url}/api/v1/rollouts/default/web`)).status).toBe(404);
        const pause = await fetch(`${url}/api/v1/rollouts/default/web/pause`, { method: 'POST' });
        expect(pause.status).toBe(404);
        expect(((await scene.rollout('web')) as { spec?: { paused?: boolean } }).spec?.paused).not.toBe(true);
      },
    );
  });

  it('serves the page with a strict content security policy', async () => {
    const page = await fetch(`${scene.url}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/ui/app.js">');
    expect((await fetch(`${scene.url}/ui/app.js`)).headers.get('content-type')).toContain('javascript');
    // The page's library comes from node_modules, under the same policy; the folder's tsconfig is not served.
    const preact = await fetch(`${scene.url}/ui/vendor/preact.js`);
    expect(preact.headers.get('content-type')).toContain('javascript');
    expect(preact.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await preact.text()).toContain('export');
    expect((await fetch(`${scene.url}/ui/tsconfig.json`)).status).toBe(404);
    expect((await fetch(`${scene.url}/ui/../package.json`)).status).not.toBe(200);
  });
});
