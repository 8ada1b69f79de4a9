// Benchmark: promotion by pull request (issue 13). (a) staging Rollout Healthy at a new revision → the
// promotion pull request open on the forge double; (b) the reviewer's merge call → prod's canary ReplicaSet
// in the sandbox. Rollgate runs with its defaults (GitHubForge spaces a token's writes 1 s apart, and
// pull-request/comment writes 3 s apart); every request the double receives is timed, so the results say
// how much of (a) is that spacing, Git, the API itself, and the rest (watch, queue, Kubernetes reads).
// BENCH_TRACE=1 prints each (a) interval's requests; BENCH_ITERATIONS sets the number of promotions (8).
import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { performance } from 'node:perf_hooks';
import { GitHubForge } from '../src/forge/github-forge.ts';
import { toPlainObject, type KubeClients } from '../src/kube/client.ts';
import { eventually } from '../test/support/eventually.ts';
import { type ForgeDouble, type RecordedRequest } from '../test/support/forge-double/forge-double.ts';
import type { WebhookDelivery } from '../test/support/forge-double/github-webhooks.ts';
import { PROMOTION_REPO, startPromotionScene, type PromotionScene } from '../test/support/promotion-scene.ts';
import { redisForBench } from './private-redis.ts';
import type { BenchResult } from './run.ts';
import { median, percentile } from './stats.ts';
import { webRollout } from '../test/support/web-rollout.ts';

const REPO = PROMOTION_REPO;
/** Measured promotions (one warm-up before them is not counted). */
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 8);
/** Bounds the whole bench on a slow machine: stops measuring after this long (at least 3 samples). */
const BUDGET_MS = 150_000;
const POLL_MS = 20;
/** GitHubForge's defaults (src/forge/github-forge.ts), used only to estimate how long the spacer held a write. */
const WRITE_SPACING_MS = 1_000;
const NOTIFICATION_SPACING_MS = 3_000;

const rollout = (image: string): string => webRollout(image);

/** A request the double received, with when it arrived and when the double answered (performance.now()). */
interface TimedRequest extends RecordedRequest {
  at: number;
  answeredAt?: number;
}

/** Stamps every request the double records: arrival when recorded, answer when its status is set. */
function timeRequests(double: ForgeDouble): TimedRequest[] {
  const timed: TimedRequest[] = [];
  const log = double.requests;
  const push = log.push.bind(log);
  log.push = (...items: RecordedRequest[]): number => {
    for (const item of items) {
      const entry = item as TimedRequest;
      entry.at = performance.now();
      let status: number | undefined;
      Object.defineProperty(entry, 'status', {
        enumerable: true,
        get: () => status,
        set: (value: number | undefined) => {
          status = value;
          entry.answeredAt ??= performance.now();
        },
      });
      timed.push(entry);
    }
    return push(...items);
  };
  return timed;
}

/** Stamps every webhook the double sends: when sent, and when the receiver answered. */
function timeDeliveries(double: ForgeDouble): Array<WebhookDelivery & { at: number; answeredAt?: number }> {
  const timed: Array<WebhookDelivery & { at: number; answeredAt?: number }> = [];
  const log = double.webhooks.deliveries;
  const push = log.push.bind(log);
  log.push = (...items: WebhookDelivery[]): number => {
    for (const item of items) {
      const entry = item as WebhookDelivery & { at: number; answeredAt?: number };
      entry.at = performance.now();
      let status: number | undefined;
      Object.defineProperty(entry, 'status', {
        enumerable: true,
        get: () => status,
        set: (value: number | undefined) => {
          status = value;
          entry.answeredAt ??= performance.now();
        },
      });
      timed.push(entry);
    }
    return push(...items);
  };
  return timed;
}

const isWrite = (r: RecordedRequest): boolean =>
  r.kind === 'api' && r.method !== 'GET' && r.method !== 'HEAD';
/** Octokit's notification paths among those Rollgate writes: opening a pull request, commenting, merging. */
const isNotification = (r: RecordedRequest): boolean =>
  isWrite(r) && /^\/repos\/[^/]+\/[^/]+\/(pulls|issues\/\d+\/comments|pulls\/\d+\/merge)$/.test(r.path);

interface Scene extends PromotionScene {
  requests: TimedRequest[];
  deliveries: Array<WebhookDelivery & { at: number; answeredAt?: number }>;
}

async function startScene(redisUrl: string): Promise<Scene> {
  let requests: TimedRequest[] = [];
  let deliveries: Scene['deliveries'] = [];
  const scene = await startPromotionScene({
    redisUrl,
    files: {
      'envs/staging/web.yaml': rollout('registry.example/web:1.0.0'),
      'envs/prod/web.yaml': rollout('registry.example/web:1.0.0'),
    },
    beforeRepository: (double) => {
      requests = timeRequests(double);
      deliveries = timeDeliveries(double);
    },
  });
  return Object.assign(scene, { requests, deliveries });
}

interface LiveRollout {
  image?: string;
  phase?: string;
  /** The status was written for the current spec (observedGeneration = generation). */
  observed: boolean;
  /** The stable ReplicaSet is the current revision's. */
  stableIsCurrent: boolean;
}

async function liveRollout(clients: KubeClients, namespace: string): Promise<LiveRollout | undefined> {
  try {
    const raw = toPlainObject<{
      metadata: { generation?: number };
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
      status?: {
        phase?: string;
        observedGeneration?: string | number;
        currentPodHash?: string;
        stableRS?: string;
      };
    }>(
      await clients.custom.getNamespacedCustomObject({
        group: 'rollgate.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'rollouts',
        name: 'web',
      }),
    );
    const status = raw.status ?? {};
    return {
      image: raw.spec.template.spec.containers[0]?.image,
      phase: status.phase,
      observed:
        raw.metadata.generation !== undefined &&
        String(status.observedGeneration) === String(raw.metadata.generation),
      stableIsCurrent: status.currentPodHash !== undefined && status.currentPodHash === status.stableRS,
    };
  } catch {
    return undefined;
  }
}

/** performance.now() once `probe` holds, polled every POLL_MS. */
async function momentWhen(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await probe()) return performance.now();
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const healthyAt = (clients: KubeClients, namespace: string, image: string) => async () => {
  const live = await liveRollout(clients, namespace);
  // Healthy as written for this spec: right after the apply the status still says Healthy (the old revision's).
  return live?.image === image && live.observed && live.stableIsCurrent && live.phase === 'Healthy';
};

/** Where the time of (a) went, from the double's request log. */
interface OpenBreakdown {
  /** Waits before writes the spacer held (any look's: a look queues behind the one before it). */
  spacing: number;
  api: number;
  git: number;
  /** Other time before the look that opens the pull request starts (watch, queue, the look before it). */
  beforeLook: number;
  /** Other time inside that look between its requests (Kubernetes read, isomorphic-git work, planning). */
  inLook: number;
  writes: number;
}

/**
 * Splits [from, to] by the requests in it (one look runs at a time for one promotion and rollout, and a
 * look's requests are sequential): time inside API and Git requests (arrival → answer), the part of the gap
 * before a write that falls before one spacing after the previous write of its group (the spacer's hold), and the rest,
 * before and inside the look that opens the pull request (the one that reads the target: it starts with
 * the commit-status read just before the first Git request).
 */
function breakdown(requests: TimedRequest[], from: number, to: number): OpenBreakdown {
  const result: OpenBreakdown = { spacing: 0, api: 0, git: 0, beforeLook: 0, inLook: 0, writes: 0 };
  const window = requests.filter((r) => r.at >= from && r.at <= to && r.answeredAt !== undefined);
  const firstGit = window.findIndex((r) => r.kind === 'git');
  const lookStart =
    window
      .slice(0, firstGit === -1 ? window.length : firstGit)
      .findLast((r) => r.method === 'GET' && /\/status$/.test(r.path))?.at ?? from;
  let cursor = from;
  for (const r of window) {
    const gap = Math.max(0, r.at - cursor);
    let held = 0;
    if (isWrite(r)) {
      result.writes++;
      // The spacer holds a write until one spacing after the previous write of its group started (which
      // reached the double a moment later): that much of the gap before it is spacing, the rest is not.
      const until = (previous: TimedRequest | undefined, spacing: number) =>
        previous === undefined ? 0 : previous.at + spacing - cursor;
      const before = requests.filter((w) => w.at < r.at && isWrite(w)).at(-1);
      const beforeNotification = requests.filter((w) => w.at < r.at && isNotification(w)).at(-1);
      held = Math.min(
        gap,
        Math.max(
          0,
          until(before, WRITE_SPACING_MS),
          isNotification(r) ? until(beforeNotification, NOTIFICATION_SPACING_MS) : 0,
        ),
      );
    }
    result.spacing += held;
    if (r.at <= lookStart) result.beforeLook += gap - held;
    else result.inLook += gap - held;
    const inside = Math.min(r.answeredAt ?? to, to) - r.at;
    if (r.kind === 'git') result.git += inside;
    else result.api += inside;
    cursor = Math.max(cursor, r.answeredAt ?? to);
  }
  result.inLook += Math.max(0, to - cursor);
  return result;
}

/** With BENCH_TRACE set: every request of (a) relative to Healthy, to see where the time goes. */
function trace(tag: string, requests: TimedRequest[], healthy: number, opened: number): void {
  const rel = (t: number | undefined) => (t === undefined ? '?' : (t - healthy).toFixed(0).padStart(6));
  console.log(`\n${tag}: Healthy → PR open ${(opened - healthy).toFixed(0)} ms`);
  for (const r of requests)
    if (r.at >= healthy - 3_000 && r.at <= opened)
      console.log(
        `  ${rel(r.at)} → ${rel(r.answeredAt)}  ${r.kind} ${r.method} ${r.path.split('?')[0]} ${r.status}`,
      );
}

interface Sample {
  openMs: number;
  open: OpenBreakdown;
  mergeMs: number;
  /** Merge call → the double answered it (client, real git merge, push payload built). */
  mergeCallMs: number;
  /** Merge answered → Rollgate answered the push webhook. */
  webhookMs: number;
  /** Webhook answered → canary ReplicaSet seen (poll, sync, apply, reconcile). */
  afterWebhookMs: number;
  /** From the merge call: the push webhook sent, prod's poll and sync jobs (BullMQ, 1 ms), the ReplicaSet. */
  jobs?: { toWebhook: number; toPoll: number; poll: number; toSync: number; syncToCanary: number };
}

/** The first job of `queue` for `source` created at or after `since` (epoch ms). */
async function jobFor(queue: Queue, source: string, since: number): Promise<Job | undefined> {
  const jobs = await queue.getJobs(['completed', 'active'], 0, 50);
  return jobs
    .filter((j) => j.timestamp >= since && (j.data as { source?: string }).source === source)
    .sort((a, b) => a.timestamp - b.timestamp)[0];
}

async function promoteOnce(scene: Scene, reviewer: GitHubForge, tag: string): Promise<Sample> {
  const { double, clients, requests, deliveries } = scene;
  const image = `registry.example/web:${tag}`;
  await double.commit(REPO, 'main', { 'envs/staging/web.yaml': rollout(image) });
  await eventually(
    'staging syncs the new image',
    async () => (await liveRollout(clients, 'staging'))?.image === image,
    {
      timeoutMs: 30_000,
      intervalMs: POLL_MS,
    },
  );
  const healthy = await momentWhen('staging Healthy', healthyAt(clients, 'staging', image));
  const title = `Promote web to ${tag}`;
  const openPull = () =>
    [...double.repository(REPO).pulls.values()].find((p) => p.state === 'open' && p.title === title);
  await momentWhen('the promotion pull request', () => openPull() !== undefined, 30_000);
  // The moment the double answered the pull request's creation (the poll above only confirms it).
  const created = requests.find(
    (r) => r.method === 'POST' && /\/pulls$/.test(r.path) && r.status === 201 && r.at >= healthy - 1_000,
  );
  const opened = created?.answeredAt ?? performance.now();
  if (process.env.BENCH_TRACE) trace(tag, requests, healthy, opened);
  const pull = openPull();
  if (!pull) throw new Error('the promotion pull request vanished');
  // Let Rollgate's look finish (labels) so its writes do not overlap the merge.
  await eventually('the promotion label', () => pull.labels.includes('promotion'), { intervalMs: POLL_MS });
  const headSha = await double.branchSha(REPO, pull.head);
  if (headSha === undefined) throw new Error('no head branch');

  const mergeStart = performance.now();
  const mergeStartEpoch = Date.now();
  await reviewer.merge(pull.number, headSha);
  const merged = performance.now();
  const canary = await momentWhen('prod canary ReplicaSet', async () => {
    const sets = await clients.apps.listNamespacedReplicaSet({ namespace: 'prod' });
    return sets.items.some(
      (rs) =>
        rs.metadata?.labels?.['rollouts-pod-template-hash'] !== undefined &&
        rs.spec?.template?.spec?.containers[0]?.image === image,
    );
  });
  const push = deliveries.find(
    (d) => d.event === 'push' && d.at >= mergeStart && d.answeredAt !== undefined && d.answeredAt <= canary,
  );
  const webhookAnswered = push?.answeredAt ?? merged;
  // BullMQ's epoch-ms job times, on performance.now()'s scale.
  const fromEpoch = (epoch: number) => mergeStart + (epoch - mergeStartEpoch);
  const queues = scene.process.poller?.queues;
  const poll = queues && (await jobFor(queues.poll.queue, 'prod', mergeStartEpoch - 1));
  const sync = queues && (await jobFor(queues.sync.queue, 'prod', mergeStartEpoch - 1));
  const jobs =
    push && poll?.processedOn && poll.finishedOn && sync?.processedOn
      ? {
          toWebhook: push.at - mergeStart,
          toPoll: fromEpoch(poll.processedOn) - push.at,
          poll: poll.finishedOn - poll.processedOn,
          toSync: sync.processedOn - poll.finishedOn,
          syncToCanary: canary - fromEpoch(sync.processedOn),
        }
      : undefined;
  await momentWhen('prod Healthy', healthyAt(clients, 'prod', image), 30_000);
  await scene.double.flushWebhooks();
  return {
    openMs: opened - healthy,
    open: breakdown(requests, healthy, opened),
    mergeMs: canary - mergeStart,
    mergeCallMs: merged - mergeStart,
    webhookMs: webhookAnswered - merged,
    afterWebhookMs: canary - webhookAnswered,
    ...(jobs ? { jobs } : {}),
  };
}

export async function run(): Promise<BenchResult[]> {
  const redis = await redisForBench();
  let scene: Scene | undefined;
  try {
    scene = await startScene(redis.url);
    const { double, clients } = scene;
    await momentWhen('staging Healthy at 1.0.0', healthyAt(clients, 'staging', 'registry.example/web:1.0.0'));
    await momentWhen('prod Healthy at 1.0.0', healthyAt(clients, 'prod', 'registry.example/web:1.0.0'));
    // A reviewer merges, with their own token: GitHub spaces writes per token, so Rollgate's spacing
    // (shared by every client of one token in a process) does not delay the merge.
    const login = 'bench-reviewer';
    const token = `ghp_reviewer${randomUUID().replaceAll('-', '')}`;
    double.addToken(token, { user: double.addUser(login) });
    double.repository(REPO).collaborators.add(login);
    const reviewer = new GitHubForge({
      provider: 'github',
      apiUrl: double.githubApiUrl,
      repository: REPO,
      token,
    });

    const started = performance.now();
    await promoteOnce(scene, reviewer, '2.0.0'); // warm-up: first webhook schema compile, connections
    const samples: Sample[] = [];
    for (let i = 1; i <= ITERATIONS; i++) {
      samples.push(await promoteOnce(scene, reviewer, `2.${i}.0`));
      if (samples.length >= 3 && performance.now() - started > BUDGET_MS) break;
    }
    if (double.violations().length > 0)
      throw new Error(`contract violations: ${double.violations().join('; ')}`);

    const open = samples.map((s) => s.openMs);
    const merge = samples.map((s) => s.mergeMs);
    const unspaced = samples.map((s) => s.openMs - s.open.spacing);
    const med = (pick: (s: Sample) => number) => median(samples.map(pick));
    const n = samples.length;
    const withJobs = samples.flatMap((s) => (s.jobs ? [s.jobs] : []));
    const jobStage = (
      name: string,
      pick: (j: NonNullable<Sample['jobs']>) => number,
      notes = 'median; BullMQ job timestamps (1 ms resolution)',
    ): BenchResult => ({
      name,
      value: median(withJobs.map(pick)),
      unit: 'ms',
      notes: `${notes}; ${withJobs.length} of ${n}`,
    });
    const verdict = (values: number[], p50Goal: number) =>
      `p50 ${percentile(values, 50) <= p50Goal ? 'met' : 'not met'}`;
    return [
      {
        name: '(a) staging Healthy → promotion PR open, p50',
        value: percentile(open, 50),
        unit: 'ms',
        goal: '≤ 2000 ms',
        notes: `${n} promotions after a warm-up; Healthy polled every ${POLL_MS} ms; open = the double answered POST /pulls 201; ${verdict(open, 2_000)}`,
      },
      {
        name: '(a) p95',
        value: percentile(open, 95),
        unit: 'ms',
        goal: '≤ 2000 ms',
        notes: percentile(open, 95) <= 2_000 ? 'met' : 'not met',
      },
      { name: '(a) max', value: Math.max(...open), unit: 'ms' },
      {
        name: '(a) of which write spacing (GitHubForge 1 s / 3 s)',
        value: med((s) => s.open.spacing),
        unit: 'ms',
        notes: `median; the part of each gap before a write that ends one spacing after the previous write (${med((s) => s.open.writes)} writes in the interval: commit statuses, the pull request)`,
      },
      {
        name: '(a) less its write spacing, p50',
        value: percentile(unspaced, 50),
        unit: 'ms',
        goal: '≤ 2000 ms',
        notes: `each sample less the spacing counted below; p95 ${percentile(unspaced, 95).toFixed(0)} ms`,
      },
      {
        name: '(a) of which Git requests (fetch target, push branch)',
        value: med((s) => s.open.git),
        unit: 'ms',
        notes: 'median; arrival → answer at the double (git http-backend, one process per request)',
      },
      {
        name: '(a) of which API requests',
        value: med((s) => s.open.api),
        unit: 'ms',
        notes: 'median; arrival → answer at the double',
      },
      {
        name: '(a) of which before the opening look starts',
        value: med((s) => s.open.beforeLook),
        unit: 'ms',
        notes:
          'median, spacing excluded; watch event → promote job, and the look for the phase before Healthy still running',
      },
      {
        name: '(a) of which inside the opening look, between requests',
        value: med((s) => s.open.inLook),
        unit: 'ms',
        notes: 'median, spacing excluded; Kubernetes read, building and packing the commit, planning',
      },
      {
        name: '(b) merge call → prod canary ReplicaSet, p50',
        value: percentile(merge, 50),
        unit: 'ms',
        goal: '≤ 500 ms',
        notes: `reviewer's GitHubForge.merge (own token); ReplicaSet with the new image polled every ${POLL_MS} ms; ${verdict(merge, 500)}`,
      },
      {
        name: '(b) p95',
        value: percentile(merge, 95),
        unit: 'ms',
        goal: '≤ 500 ms',
        notes: percentile(merge, 95) <= 500 ? 'met' : 'not met',
      },
      { name: '(b) max', value: Math.max(...merge), unit: 'ms' },
      {
        name: '(b) of which the merge call',
        value: med((s) => s.mergeCallMs),
        unit: 'ms',
        notes: 'median; client, real git merge and push payload on the double',
      },
      {
        name: '(b) of which merge answered → push webhook answered (202)',
        value: med((s) => s.webhookMs),
        unit: 'ms',
        notes: 'median',
      },
      {
        name: '(b) of which webhook answered → canary ReplicaSet',
        value: med((s) => s.afterWebhookMs),
        unit: 'ms',
        notes: 'median; poll, sync (fetch, diff, apply), reconcile',
      },
      ...(withJobs.length === 0
        ? []
        : [
            jobStage(
              '(b) timeline: merge call → push webhook sent',
              (j) => j.toWebhook,
              "the double: token check, real git merge, the push event's payload (git calls, schema check)",
            ),
            jobStage('(b) … webhook sent → prod poll job started', (j) => j.toPoll),
            jobStage('(b) … prod poll job (ref check)', (j) => j.poll),
            jobStage('(b) … poll finished → prod sync job started', (j) => j.toSync),
            jobStage(
              '(b) … sync job started → canary ReplicaSet',
              (j) => j.syncToCanary,
              'fetch, diff, apply the Rollout, then the reconcile job creates the ReplicaSet',
            ),
          ]),
    ];
  } finally {
    if (scene) {
      await scene.stop();
    }
    await redis.stop();
  }
}
