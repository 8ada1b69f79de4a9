// The dashboard attacked as issue 26 did: a cross-site POST, a rebinding Host, open reads on a public bind, a bad link.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { systemClock } from '../../../src/clock/clock.ts';
import { toPlainObject, type KubeClients } from '../../../src/kube/client.ts';
import { resumeRollout } from '../../../src/views/rollout-commands.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { wireDashboard } from '../../../src/process/dashboard-wiring.ts';
import type { RunningProcess } from '../../../src/process/start-process.ts';
import type { Sandbox } from '../../../src/sandbox/index.ts';
import { startDashboardServer } from '../../../src/server/dashboard/dashboard-server.ts';
import { ROLLGATE_API_VERSION } from '../../../src/manifest/api-version.ts';
import { eventually } from '../../support/eventually.ts';
import { startSystemScene, type SystemScene } from '../../support/system-scene.ts';
import { genericPush } from '../server/webhook-requests.ts';
import { launchChromium, type Browser } from './chromium.ts';

const BIN = join(import.meta.dirname, '..', '..', '..', 'bin', 'rollgate.js');
const GROUP = { group: 'rollgate.dev', version: 'v1alpha1', plural: 'rollouts', namespace: 'default' };

interface Answer {
  status: number;
  body: string;
}

/**
 * One request as any client may send it (node:http, not fetch: a browser or fetch would not let a test set
 * Host, and an attacker's own client sets whatever it likes).
 */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      // The event stream never ends on its own: its first bytes say enough.
      const done = (): void => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body });
      };
      res.on('data', (chunk: string) => {
        body += chunk;
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) done();
      });
      res.on('end', done);
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) done();
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The text/plain POST a hostile page can send to any origin without a preflight (a "simple request"). */
const crossSitePost = (origin: string, extra: Record<string, string> = {}) => ({
  method: 'POST',
  headers: {
    'content-type': 'text/plain;charset=UTF-8',
    origin,
    'sec-fetch-site': 'cross-site',
    'sec-fetch-mode': 'no-cors',
    ...extra,
  },
  body: '{}',
});

async function paused(clients: KubeClients): Promise<boolean> {
  const live = toPlainObject(await clients.custom.getNamespacedCustomObject({ ...GROUP, name: 'web' })) as {
    spec?: { paused?: boolean };
  };
  return live.spec?.paused === true;
}

let scene: SystemScene | undefined;
let sandbox: Sandbox;
let clients: KubeClients;
/** `rollgate run` on 127.0.0.1 without a read token, as the demo runs it. */
let local: RunningProcess;
const envs: string[] = [];

async function startRun(host: string, dashboard: Record<string, unknown> = {}): Promise<RunningProcess> {
  const started = await scene!.startRollgate({
    config: {
      redis: { prefix: `rg-abuse-${randomUUID().slice(0, 8)}` },
      server: { host },
      webhooks: { generic: { secret: 'dashboard-abuse-hook-secret' } },
      dashboard,
    },
  });
  return started.running;
}

beforeAll(async () => {
  scene = await startSystemScene({ name: 'abuse', redisUrl: inject('redisUrl') });
  sandbox = scene.sandbox!;
  clients = scene.clients;
  local = await startRun('127.0.0.1');
  await clients.custom.createNamespacedCustomObject({
    ...GROUP,
    body: {
      apiVersion: ROLLGATE_API_VERSION,
      kind: 'Rollout',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'web:1' }] },
        },
        strategy: { canary: { steps: [{ setWeight: 50 }, { pause: {} }] } },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await scene?.stop();
  for (const name of envs) delete process.env[name];
});

describe('rollgate dashboard (the local command)', () => {
  let child: ChildProcess | undefined;
  let printed = '';
  let base = '';
  let token = '';
  let chromium: Browser | undefined;

  beforeAll(async () => {
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'rollgate-abuse-')), 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    child = spawn(process.execPath, [BIN, 'dashboard', '--port', '0', '--kubeconfig', kubeconfig], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const printedUrl = await eventually(
      'the dashboard URL',
      // The token is optional here so that, against the old command (none), the attacks below still run.
      () => /dashboard: (http:\/\/127\.0\.0\.1:\d+\/ui\/(?:\?token=[A-Za-z0-9_-]+)?)/.exec(printed)?.[1],
      { timeoutMs: 30_000 },
    );
    const url = new URL(printedUrl);
    base = url.origin;
    token = url.searchParams.get('token') ?? '';
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    if (child?.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('prints a fresh token once, with the address; reads and the event stream need it', async () => {
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(printed.split(token).length - 1).toBe(1);
    const none = await send(`${base}/api/v1/rollouts`);
    expect(none.status).toBe(401);
    expect(none.body).not.toContain('"web"');
    expect((await send(`${base}/api/v1/events`)).status).toBe(401);
    expect((await send(`${base}/api/v1/rollouts/default/web`)).status).toBe(401);
    const auth = { authorization: `Bearer ${token}` };
    const list = await send(`${base}/api/v1/rollouts`, { headers: auth });
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body)).toMatchObject({ items: [{ namespace: 'default', name: 'web' }] });
    expect((await send(`${base}/api/v1/events`, { headers: auth })).status).toBe(200);
  });

  it('refuses the cross-site text/plain POST that paused a rollout: no token, or the token from another origin', async () => {
    const attacker = 'http://attacker.example';
    const bare = await send(`${base}/api/v1/rollouts/default/web/pause`, crossSitePost(attacker));
    expect(bare.status).toBe(401);
    // Even a page that somehow held the token is refused from another origin.
    const withToken = await send(
      `${base}/api/v1/rollouts/default/web/pause`,
      crossSitePost(attacker, { authorization: `Bearer ${token}` }),
    );
    expect(withToken.status).toBe(403);
    expect(JSON.parse(withToken.body)).toMatchObject({ error: { code: 'dashboard.cross_origin' } });
    // Another port of this machine is another origin too (same-site is not same-origin).
    const otherPort = await send(
      `${base}/api/v1/rollouts/default/web/pause`,
      crossSitePost('http://127.0.0.1:1', {
        authorization: `Bearer ${token}`,
        'sec-fetch-site': 'same-site',
      }),
    );
    expect(otherPort.status).toBe(403);
    expect(await paused(clients)).toBe(false);
  });

  it('answers a rebinding Host with 403 and no data, even with the token', async () => {
    const port = new URL(base).port;
    for (const headers of [
      { host: `attacker.example:${port}` } as Record<string, string>,
      { host: `attacker.example:${port}`, authorization: `Bearer ${token}` },
    ]) {
      const list = await send(`${base}/api/v1/rollouts`, { headers });
      expect(list.status).toBe(403);
      expect(JSON.parse(list.body)).toMatchObject({ error: { code: 'dashboard.host_not_allowed' } });
      expect(list.body).not.toContain('"web"');
      expect((await send(`${base}/api/v1/events`, { headers })).status).toBe(403);
      expect((await send(`${base}/ui/`, { headers })).status).toBe(403);
    }
    // localhost is this machine too.
    const local = await send(`${base}/api/v1/rollouts`, {
      headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` },
    });
    expect(local.status).toBe(200);
  });

  it('lets its own page act: the token from the printed address, then Pause in a real browser', async () => {
    chromium = await launchChromium();
    const page = await chromium.context.newPage();
    await page.goto(`${base}/ui/?token=${token}#/rollouts/default/web`);
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'web' }).waitFor({ timeout: 20_000 });
    // The token leaves the address bar (and the history) once the page holds it.
    expect(page.url()).toBe(`${base}/ui/#/rollouts/default/web`);
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Pause?' });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Pause', exact: true }).click();
    await expect.poll(() => page.locator('#notice').textContent(), { timeout: 15_000 }).toContain('paused');
    expect(await paused(clients)).toBe(true);
    await resumeRollout(clients, { namespace: 'default', name: 'web' });
    await page.close();
  }, 60_000);
});

describe('rollgate run', () => {
  it('bound to loopback (the demo): reads need no token, but a rebinding Host gets 403 and no list', async () => {
    const url = local.http.url;
    const port = new URL(url).port;
    expect((await send(`${url}/api/v1/rollouts`)).status).toBe(200);
    const rebound = await send(`${url}/api/v1/rollouts`, { headers: { host: `attacker.example:${port}` } });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('"web"');
    expect(
      (await send(`${url}/api/v1/events`, { headers: { host: `attacker.example:${port}` } })).status,
    ).toBe(403);
    // Webhooks are not the dashboard's: any Host still reaches them.
    const push = genericPush('http://example/apps.git', {
      branch: 'main',
      secret: 'dashboard-abuse-hook-secret',
    });
    const hook = await send(`${url}/webhooks/generic`, {
      method: 'POST',
      headers: { ...push.headers, host: 'git-hooks.example' },
      body: push.body,
    });
    expect(hook.status).toBe(202);
  });

  it('bound to every interface without a read token: reads and the event stream are refused, webhooks still work', async () => {
    const open = await startRun('0.0.0.0');
    try {
      const url = `http://127.0.0.1:${open.http.port}`;
      for (const path of [
        '/api/v1/rollouts',
        '/api/v1/rollouts/default/web',
        '/api/v1/events',
        '/api/v1/promotions',
      ]) {
        const res = await send(`${url}${path}`);
        expect(res.status, path).toBe(401);
        expect(res.body, path).not.toContain('"web"');
        expect(JSON.parse(res.body), path).toMatchObject({
          error: {
            code: 'dashboard.unauthorized',
            message: expect.stringContaining('dashboard.readTokenEnv'),
          },
        });
      }
      // The page itself holds no data: it still loads, and asks for a token.
      expect((await send(`${url}/ui/`)).status).toBe(200);
      const push = genericPush('http://example/apps.git', {
        branch: 'main',
        secret: 'dashboard-abuse-hook-secret',
      });
      const hook = await send(`${url}/webhooks/generic`, {
        method: 'POST',
        headers: push.headers,
        body: push.body,
      });
      expect(hook.status).toBe(202);
    } finally {
      await open.stop({ force: true });
    }
  }, 60_000);

  it('bound to every interface with a read token: the token reads, from any Host (an ingress names it)', async () => {
    const env = `RG_TEST_ABUSE_READ_${randomUUID().slice(0, 8).toUpperCase()}`;
    envs.push(env);
    process.env[env] = `read-${randomUUID()}`;
    const open = await startRun('0.0.0.0', { readTokenEnv: env });
    try {
      const url = `http://127.0.0.1:${open.http.port}`;
      expect((await send(`${url}/api/v1/rollouts`)).status).toBe(401);
      const res = await send(`${url}/api/v1/rollouts`, {
        headers: { authorization: `Bearer ${process.env[env] ?? ''}`, host: 'rollgate.example.com' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toContain('"web"');
    } finally {
      await open.stop({ force: true });
    }
  }, 60_000);
});

describe('pull request links on the page', () => {
  it('links only http(s) addresses: a javascript: URL from the forge is shown as text', async () => {
    const dashboard = wireDashboard({
      clients,
      clock: systemClock,
      logger: silentLogger,
      access: { openReads: true, actions: { enabled: false } },
      promotions: () =>
        Promise.resolve({
          environments: [],
          promotions: [
            {
              name: 'staging-to-prod',
              from: 'staging',
              to: 'prod',
              looks: [
                {
                  rollout: 'staging/web',
                  promotable: false,
                  reason: 'a pull request is open',
                  pullRequest: {
                    number: 7,
                    url: 'javascript:document.title="owned"',
                    title: 'promote web',
                    headSha: 'abc',
                    checks: 'pending',
                  },
                },
              ],
            },
          ],
          history: [
            {
              promotion: 'staging-to-prod',
              rollout: 'staging/web',
              event: 'opened',
              pullRequest: { number: 7, url: 'data:text/html,x' },
            },
            {
              promotion: 'staging-to-prod',
              rollout: 'staging/web',
              event: 'merged',
              pullRequest: { number: 6, url: 'https://forge.example/pulls/6' },
            },
          ],
        }),
    });
    const server = await startDashboardServer({
      dashboard,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${server.url}/ui/#/promotions`);
      await expect.poll(() => page.locator('main').textContent(), { timeout: 15_000 }).toContain('#6');
      const hrefs = await page
        .locator('main a[href]')
        .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
      expect(hrefs).toContain('https://forge.example/pulls/6');
      expect(hrefs.filter((h) => !h.startsWith('#') && !/^https?:/.test(h))).toEqual([]);
      // The refused address is still there to read, as text.
      expect(await page.locator('main').textContent()).toContain('#7 promote web');
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 60_000);
});
