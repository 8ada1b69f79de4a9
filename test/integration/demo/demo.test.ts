// The demo as a smoke test: the whole story through Redis, the sandbox, real git and Rollgate, with --exit semantics.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEMO_IMAGES, runDemo, type DemoResult } from '../../../src/demo/index.ts';

/** The pauses of examples/demo/'s canaries, and the shorter ones the test's copy walks. */
const PACED = [
  { file: 'staging/rollout.yaml', from: 'pause: { duration: 3s }', to: 'pause: { duration: 2s }', count: 3 },
  { file: 'prod/rollout.yaml', from: 'pause: { duration: 2s }', to: 'pause: { duration: 1s }', count: 2 },
] as const;

/**
 * examples/demo/ copied into `dir` with each canary pause a second shorter (`seedDir`): the same story to
 * the same outcomes, ~9 s sooner. Not shorter still: the supersede scenario pushes 1.3.0 once 1.2.0 is at
 * 50 %, and 1.2.0's remaining pauses are the time that push has to land mid-canary. `rollgate demo`
 * itself reads examples/demo/ as it is; the copy fails loudly if the pauses it shortens were changed there.
 */
function pacedSeed(dir: string): string {
  const seed = join(dir, 'seed');
  cpSync(new URL('../../../examples/demo/', import.meta.url), seed, { recursive: true });
  for (const { file, from, to, count } of PACED) {
    const text = readFileSync(join(seed, file), 'utf8');
    if (text.split(from).length - 1 !== count)
      throw new Error(`examples/demo/${file} no longer has ${count} × "${from}": update PACED`);
    writeFileSync(join(seed, file), text.replaceAll(from, to));
  }
  return seed;
}

/** The keys any demo run left in the Redis at `url`. */
async function demoKeysIn(url: string): Promise<string[]> {
  const redis = new Redis(url);
  try {
    return await redis.keys('{rollgate-demo-*');
  } finally {
    redis.disconnect();
  }
}

describe('rollgate demo', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-demo-test-'));
  const seedDir = pacedSeed(dir);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('plays first sync, canary, supersede, abort, the promotion to prod and the kustomize overlays to their expected outcomes, then cleans up', async () => {
    const redisUrl = inject('redisUrl');
    let printed = '';
    // Once the story is told, the demo keeps running; meanwhile the dashboard it printed is read.
    const seen: { page?: number; rollouts?: string[]; history?: string[] } = {};
    const keepRunningUntil = (async () => {
      while (!printed.includes('━━ Continue by hand ━━')) await new Promise((r) => setTimeout(r, 200));
      const url = /Dashboard {3}(\S+)/.exec(printed)?.[1] ?? '';
      seen.page = (await fetch(url)).status;
      const api = url.replace(/\/ui\/$/, '/api/v1');
      const list = (await (await fetch(`${api}/rollouts`)).json()) as {
        items: Array<{ namespace: string; name: string }>;
      };
      seen.rollouts = list.items.map((r) => `${r.namespace}/${r.name}`);
      const promotions = (await (await fetch(`${api}/promotions`)).json()) as {
        history: Array<{ event: string; pullRequest: { number: number } }>;
      };
      seen.history = promotions.history.map((h) => `#${h.pullRequest.number} ${h.event}`);
    })();
    const result: DemoResult = await runDemo({
      out: { write: (text: string) => (printed += text) },
      redisUrl,
      kubeconfigPath: join(dir, 'demo.kubeconfig'),
      logPath: join(dir, 'demo.log'),
      seedDir,
      keepRunningUntil,
    });

    expect(result.scenarios.map((s) => [s.name, s.ok])).toEqual([
      ['first sync', true],
      ['canary', true],
      ['supersede', true],
      ['abort', true],
      ['promotion', true],
      ['kustomize', true],
    ]);
    expect(result.ok).toBe(true);
    const [first, canary, supersede, abort, promotion, kustomize] = result.scenarios;
    expect(first).toMatchObject({ phase: 'Healthy', aborted: false, stableImage: DEMO_IMAGES.first });
    expect(canary).toMatchObject({ phase: 'Healthy', stableImage: DEMO_IMAGES.canary });
    expect(canary?.detail).toContain('20% → 50% → 80%');
    expect(supersede).toMatchObject({ phase: 'Healthy', stableImage: DEMO_IMAGES.newest });
    expect(abort).toMatchObject({ phase: 'Degraded', aborted: true, stableImage: DEMO_IMAGES.newest });
    expect(abort?.message).toMatch(/ProgressDeadlineExceeded/);
    expect(abort?.message).toMatch(/ImagePullBackOff/);
    // The promotion: one pull request, opened for 1.1.0, superseded by 1.3.0, never for 9.9.9, merged; prod
    // walked its own canary to Healthy on 1.3.0.
    expect(promotion).toMatchObject({
      phase: 'Healthy',
      aborted: false,
      stableImage: DEMO_IMAGES.newest,
      pullRequest: { number: 1, title: 'Promote demo to 1.3.0' },
    });
    expect(promotion?.detail).toContain('prod canary 25% → 75%');
    expect(result.pulls).toHaveLength(2);
    expect(result.pulls[0]).toMatchObject({
      head: 'rollgate/promote/staging-to-prod/demo',
      base: 'main',
      state: 'closed',
      merged: true,
      titles: ['Promote demo to 1.1.0', 'Promote demo to 1.3.0'],
    });
    expect(result.pulls[0]?.mergeCommitSha).toMatch(/^[0-9a-f]{40}$/);
    expect(result.pulls.flatMap((p) => [...p.titles, p.body]).join('\n')).not.toContain('9.9.9');
    // The kustomize layout: staging's overlay got 1.2.0 and ran its canary while prod stayed on 1.1.0; the
    // promotion's pull request edited prod's kustomization.yaml, and its merge ran prod's canary.
    expect(kustomize).toMatchObject({
      phase: 'Healthy',
      aborted: false,
      stableImage: 'ghcr.io/rollgate/web:1.2.0',
      pullRequest: { number: 2, title: 'Promote staging-web to 1.2.0' },
    });
    expect(kustomize?.detail).toContain('staging canary 10% → 50% → 80% to Healthy on 1.2.0, prod untouched');
    expect(kustomize?.detail).toContain('prod canary 10% → 50% → 80%, Healthy on 1.2.0');
    expect(result.pulls[1]).toMatchObject({
      head: 'rollgate/promote/web-staging-to-prod/staging-web',
      base: 'main',
      merged: true,
      titles: ['Promote staging-web to 1.2.0'],
    });
    expect(result.durationMs).toBeLessThan(150_000);

    // What the user reads: live progress, the summary, and how to continue by hand.
    expect(printed).toMatch(/step 2\/6 pause: 2s · canary 20% \/ stable 80%/);
    expect(printed).toContain('6/6 scenarios reached their expected outcome');
    expect(printed).toContain(
      `pull request #1 "Promote demo to 1.3.0" open: ${result.forgeApiUrl.replace(/\/api\/v1$/, '')}/rollgate/demo/pulls/1`,
    );
    expect(printed).toMatch(
      /^ +- image: ghcr\.io\/rollgate\/demo-app:1\.0\.0\n +\+ image: ghcr\.io\/rollgate\/demo-app:1\.3\.0$/m,
    );
    expect(printed).toMatch(
      /merged #1 through the forge API at head [0-9a-f]{7}: merge commit [0-9a-f]{7} on main/,
    );
    expect(printed).toMatch(
      /prod: steps done 4\/4 · canary 0% \/ stable 100% · stable 1\.3\.0 ready 4\/4 · Healthy/,
    );
    // What the kustomize scenario shows: the push to staging's overlay, staging's canary, prod untouched, the
    // pull request's one-line edit of prod's kustomization.yaml, prod's canary.
    const story = printed.slice(printed.indexOf('▶ 6/6 Kustomize'));
    expect(story).toMatch(
      /git push: [0-9a-f]{7} "web: staging runs 1\.2\.0" \(apps\/web\/overlays\/staging\/kustomization\.yaml: images newTag 1\.1\.0 → 1\.2\.0\)/,
    );
    expect(story).toMatch(
      /web-staging: step \d\/6 pause: 1s · canary 10% \/ stable 90% · canary 1\.2\.0 ready 1\/1/,
    );
    expect(story).toMatch(/web-prod: untouched: still revision \w+ on 1\.1\.0, no new ReplicaSet/);
    expect(story).toContain(
      `pull request #2 "Promote staging-web to 1.2.0" open: ${result.forgeApiUrl.replace(/\/api\/v1$/, '')}/rollgate/demo/pulls/2`,
    );
    expect(story).toMatch(
      /diff of rollgate\/promote\/web-staging-to-prod\/staging-web → main \(apps\/web\/overlays\/prod\/kustomization\.yaml\):\n +- newTag: 1\.1\.0\n +\+ newTag: 1\.2\.0\n/,
    );
    expect(story).toMatch(
      /merged #2 through the forge API at head [0-9a-f]{7}: merge commit [0-9a-f]{7} on main/,
    );
    expect(story).toMatch(/web-prod: step \d\/6 pause: 1s · canary 50% \/ stable 50%/);
    expect(story).toMatch(
      /web-prod: steps done 6\/6 · canary 0% \/ stable 100% · stable 1\.2\.0 ready 6\/6 · Healthy/,
    );
    // Before the merge, no line shows prod on anything but 1.1.0.
    const beforeMerge = story.slice(0, story.indexOf('merged #2'));
    expect(beforeMerge).not.toMatch(/web-prod: .*1\.2\.0/);
    // It ends on `rollgate get rollout` of the rollout it moved last: the prod overlay's, Healthy on 1.2.0.
    const tree = printed.slice(printed.indexOf('━━ rollgate get rollout web -n web-prod ━━'));
    expect(tree).toMatch(
      /^━━ rollgate get rollout web -n web-prod ━━\nName: +web\nNamespace: +web-prod\nStatus: +✔ Healthy\n/,
    );
    expect(tree).toMatch(/\nImages: +ghcr\.io\/rollgate\/web:1\.2\.0 \(stable\)\n/);
    // Each revision says whose change it is: the commit it was synced from and its author.
    expect(tree).toMatch(/\n(├|└)──# revision:\d+ +commit [0-9a-f]{8} by .+ <.+>\n/);
    expect(tree.match(/□ web-\w+-\w+ +Pod +✔ Running/g)).toHaveLength(6);
    // The dashboard URL is printed at the start and served until the demo ends.
    expect(printed).toContain(`  Dashboard   ${result.dashboardUrl}  (open it now`);
    expect(printed).toContain(`  Dashboard: ${result.dashboardUrl}`);
    expect(seen.page).toBe(200);
    expect(seen.rollouts).toEqual(['default/demo', 'prod/demo', 'web-prod/web', 'web-staging/staging-web']);
    expect(seen.history).toEqual(
      expect.arrayContaining(['#1 opened', '#1 merged', '#2 opened', '#2 merged']),
    );
    expect(printed).toContain('npx rollgate get rollout demo --watch');
    expect(printed).toContain(`export KUBECONFIG=${join(dir, 'demo.kubeconfig')}`);
    expect(printed).toContain(`git clone ${result.repoUrl}`);
    expect(printed).toContain(`curl -sS -X POST ${result.webhookUrl}`);
    expect(printed).toContain(`${result.forgeApiUrl}/repos/rollgate/demo/pulls?state=open`);
    expect(readFileSync(join(dir, 'demo.kubeconfig'), 'utf8')).toContain('server: http://127.0.0.1:');
    expect(readFileSync(join(dir, 'demo.log'), 'utf8')).toContain('rollgate started');

    // Progress lines come about every second while the demo watches (git and webhook lines aside, and
    // from one scenario's banner to its first line); the bound leaves room for slow reads on a loaded
    // machine (2.2 s seen at a load average of 12 on 2 cores).
    const lines = [...printed.matchAll(/^(?: {2}\[ *(\d+\.\d)s\] (.*)|▶ .*)$/gm)].map((m) => ({
      at: Number(m[1]),
      text: m[0],
      watching:
        m[2] !== undefined &&
        !/^(git push|webhook sent|\S+ is mid-canary|pull request|diff of|comment on|merged|web-prod: untouched)/.test(
          m[2],
        ),
    }));
    const gaps: Array<{ gap: number; after: string }> = [];
    for (let i = 1; i < lines.length; i++) {
      const [before, after] = [lines[i - 1], lines[i]];
      if (before?.watching && after?.watching) gaps.push({ gap: after.at - before.at, after: after.text });
    }
    expect(gaps.length).toBeGreaterThan(20);
    const widest = gaps.reduce((a, b) => (b.gap > a.gap ? b : a));
    expect(widest.gap, `before: ${widest.after}`).toBeLessThanOrEqual(3);

    // Nothing of the run is left in Redis.
    expect(result.keysDeleted).toBeGreaterThan(0);
    expect(await demoKeysIn(redisUrl)).toEqual([]);
  }, 200_000);

  it('stops everything when interrupted mid-story, reports no miss, and does not keep running', async () => {
    const redisUrl = inject('redisUrl');
    const interrupt = new AbortController();
    let printed = '';
    const result = await runDemo({
      out: {
        write: (text: string) => {
          printed += text;
          // Ctrl-C as the second scenario begins.
          if (text.includes('▶ 2/6')) interrupt.abort();
        },
      },
      redisUrl,
      kubeconfigPath: join(dir, 'interrupted.kubeconfig'),
      logPath: join(dir, 'interrupted.log'),
      seedDir,
      signal: interrupt.signal,
      // Never resolves: the demo must not wait for it once interrupted.
      keepRunningUntil: new Promise<void>(() => undefined),
    });

    expect(result.ok).toBe(false);
    expect(result.scenarios.map((s) => [s.name, s.ok])).toEqual([['first sync', true]]);
    expect(printed).toContain('interrupted: the story did not finish');
    expect(printed).not.toContain('Continue by hand');
    // Rollgate, the Git server and the sandbox are stopped; the run's Redis keys are gone.
    const sandboxUrl = /server: (http:\/\/\S+)/.exec(
      readFileSync(join(dir, 'interrupted.kubeconfig'), 'utf8'),
    )?.[1];
    expect(sandboxUrl).toBeDefined();
    for (const url of [
      result.webhookUrl,
      `${result.repoUrl}/info/refs`,
      `${sandboxUrl}/version`,
      `${result.forgeApiUrl}/users/rollgate-demo`,
    ])
      await expect(fetch(url), url).rejects.toThrow();
    expect(await demoKeysIn(redisUrl)).toEqual([]);
  }, 120_000);
});
