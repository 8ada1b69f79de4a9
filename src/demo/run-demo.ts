// `rollgate demo`: Redis, a sandbox cluster, a served Git repository and a whole Rollgate, driven through a scripted canary story.
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../config/index.ts';
import { createForge } from '../forge/create-forge.ts';
import type { PullRequest } from '../forge/forge.ts';
import { redactUrl } from '../git/remote-url.ts';
import { createKubeClients, type KubeClients } from '../kube/client.ts';
import { readRolloutTree } from '../views/read-rollout-tree.ts';
import { formatRolloutTree } from '../views/rollout-tree-text.ts';
import { createLogger, type Logger } from '../log/logger.ts';
import { openRuntime } from '../process/runtime.ts';
import { startProcess, type RunningProcess } from '../process/start-process.ts';
import { bullPrefix } from '../queue/queue-names.ts';
import { startSandbox } from '../sandbox/index.ts';
import { createRollgateMetrics } from '../server/metrics.ts';
import { hmacSha256Hex } from '../server/signature.ts';
import { startDemoForge, type DemoForge, type DemoForgePull } from './demo-forge.ts';
import { deleteDemoKeys, findDemoRedis, type DemoRedis } from './demo-redis.ts';
import { createDemoRepository, type DemoRepository } from './demo-repository.ts';
import { DemoScenarioError } from './demo-scenario-error.ts';
import { KUSTOMIZE_IMAGE, KUSTOMIZE_LAYOUT, seedKustomizeLayout, withImageTag } from './kustomize-seed.ts';
import {
  currentImage,
  describeSnapshot,
  imageTag,
  readRolloutSnapshot,
  stableImage,
  type RolloutSnapshot,
} from './rollout-snapshot.ts';

/** The images the story commits, in order; the last one is missing from the sandbox's registry. */
export const DEMO_IMAGES = {
  first: 'ghcr.io/rollgate/demo-app:1.0.0',
  canary: 'ghcr.io/rollgate/demo-app:1.1.0',
  superseded: 'ghcr.io/rollgate/demo-app:1.2.0',
  newest: 'ghcr.io/rollgate/demo-app:1.3.0',
  missing: 'ghcr.io/rollgate/demo-app:9.9.9-does-not-exist',
} as const;

/** The Rollout the demo drives in staging (examples/demo/staging/rollout.yaml, source `staging`). */
const DEMO_ROLLOUT = { namespace: 'default', name: 'demo' } as const;
/** Its copy in prod (examples/demo/prod/rollout.yaml, source `prod`), changed only by the promotion. */
const PROD_ROLLOUT = { namespace: 'prod', name: 'demo' } as const;
/** The promotion, its pull request's branch, and the repository as the demo forge names it. */
const PROMOTION = 'staging-to-prod';
const PROMOTION_BRANCH = `rollgate/promote/${PROMOTION}/${DEMO_ROLLOUT.name}`;
const FORGE_REPOSITORY = 'rollgate/demo';
/**
 * The kustomize scenario's Rollouts, as examples/kustomize renders them: each overlay sets its namespace,
 * staging's adds the name prefix `staging-`. Sources `web-staging` and `web-prod` follow the overlays.
 */
const WEB_STAGING = { namespace: 'web-staging', name: 'staging-web', label: 'web-staging: ' } as const;
const WEB_PROD = { namespace: 'web-prod', name: 'web', label: 'web-prod: ' } as const;
const WEB_PROMOTION = 'web-staging-to-prod';
const WEB_PROMOTION_BRANCH = `rollgate/promote/${WEB_PROMOTION}/${WEB_STAGING.name}`;
/** The number of scenarios the story plays. */
const SCENARIOS = 6;
/** How long the promotion scenario waits to show the pull request's "a newer revision aborted" comment. */
const ABORT_COMMENT_WAIT_MS = 10_000;

/**
 * The seed folder shipped with the project, examples/demo/: two levels up from src/demo when run from
 * source, three from dist/src/demo when built.
 */
const DEFAULT_SEED_DIR =
  ['../../examples/demo/', '../../../examples/demo/']
    .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
    .find((dir) => existsSync(join(dir, 'staging', 'rollout.yaml'))) ??
  fileURLToPath(new URL('../../examples/demo/', import.meta.url));

/** examples/kustomize/, found the same way: the kustomize scenario copies its layout at run time. */
const DEFAULT_KUSTOMIZE_EXAMPLE_DIR =
  ['../../examples/kustomize/', '../../../examples/kustomize/']
    .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
    .find((dir) => existsSync(join(dir, KUSTOMIZE_LAYOUT.base, 'kustomization.yaml'))) ??
  fileURLToPath(new URL('../../examples/kustomize/', import.meta.url));

/** The tag the kustomize scenario commits to staging: the next minor version of the one it starts on. */
export function nextTag(tag: string): string {
  const semver = /^(v?)(\d+)\.(\d+)\.\d+$/.exec(tag);
  return semver ? `${semver[1] ?? ''}${semver[2] ?? ''}.${Number(semver[3]) + 1}.0` : `${tag}-next`;
}

/** Where the demo writes what it prints. */
export interface DemoOutput {
  write(text: string): unknown;
}

export interface DemoOptions {
  out: DemoOutput;
  /** Redis URL (`--redis`); else REDIS_URL, 127.0.0.1:6379, or a private redis-server. */
  redisUrl?: string;
  /** Environment read for REDIS_URL (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where to write the sandbox kubeconfig (default `.rollgate/demo.kubeconfig`). */
  kubeconfigPath?: string;
  /** Where Rollgate's own log lines go (default `.rollgate/demo.log`). */
  logPath?: string;
  /** Port of the webhook / metrics server (default 0: a free one). */
  port?: number;
  /** examples/demo/ unless told otherwise. */
  seedDir?: string;
  /** examples/kustomize/ unless told otherwise (the kustomize scenario's layout). */
  kustomizeExampleDir?: string;
  /** How long a healthy sandbox pod takes to become Ready (default 500 ms). */
  readyDelayMs?: number;
  /** Longest wait for one scenario's outcome (default 60 s). */
  scenarioTimeoutMs?: number;
  /**
   * After the scripted part, keep everything running until this resolves (Ctrl-C in the CLI). Absent:
   * stop at once (`--exit`, not a TTY, tests).
   */
  keepRunningUntil?: Promise<void>;
  /** Aborts the scripted part early (Ctrl-C during the story); everything is still stopped cleanly. */
  signal?: AbortSignal;
}

/** What one scenario was expected to do and what it did. */
export interface DemoScenarioResult {
  name: string;
  expected: string;
  ok: boolean;
  /** What happened, in a sentence. */
  detail: string;
  durationMs: number;
  phase?: string;
  message?: string;
  aborted?: boolean;
  stableImage?: string;
  /** The promotion scenario: the pull request it merged. */
  pullRequest?: { number: number; url: string; title: string; mergeCommitSha?: string };
}

/** The whole run: `ok` is false when any scenario missed its expected outcome (exit code 1). */
export interface DemoResult {
  ok: boolean;
  scenarios: DemoScenarioResult[];
  /** The scripted part, from start to summary. */
  durationMs: number;
  repoUrl: string;
  webhookUrl: string;
  /** The dashboard page (`…/ui/`), served for as long as the demo runs. */
  dashboardUrl: string;
  /** The demo forge's API root (`…/api/v1`). */
  forgeApiUrl: string;
  /** Every pull request the demo forge received, as it ended. */
  pulls: DemoForgePull[];
  kubeconfigPath: string;
  redis: { url: string; origin: DemoRedis['origin'] };
  /** Redis keys of this run deleted at the end. */
  keysDeleted: number;
}

const POLL_MS = 250;
const PRINT_EVERY_MS = 1000;
const MAX_MESSAGE_CHARS = 220;

interface DemoContext {
  out: DemoOutput;
  /** Clients of the sandbox cluster, for watching the rollout. */
  clients: KubeClients;
  repo: DemoRepository;
  /** The stand-in for Gitea the promotion opens its pull request on. */
  forge: DemoForge;
  /** Rollgate's generic push webhook (`…/webhooks/generic`). */
  webhookUrl: string;
  webhookSecret: string;
  /** The dashboard page Rollgate serves on its port (`…/ui/`). */
  dashboardUrl: string;
  /** The tag both overlays of the kustomize layout start on (staging's, in the seed). */
  webTag: string;
  startedAt: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

function elapsed(ctx: { startedAt: number }): string {
  return `${((performance.now() - ctx.startedAt) / 1000).toFixed(1).padStart(5)}s`;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      done();
    }
    signal?.addEventListener('abort', finish, { once: true });
  });
}

/** The generic webhook's body for a push to the demo repository's main branch. */
function pushNoticeBody(ctx: DemoContext): string {
  return JSON.stringify({ repository: ctx.repo.url, branch: 'main' });
}

/** Sends the generic webhook a Git server would send after a push; the answer must be 202. */
async function sendPushWebhook(ctx: DemoContext): Promise<void> {
  const body = pushNoticeBody(ctx);
  const response = await fetch(ctx.webhookUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-rollgate-signature': `sha256=${hmacSha256Hex(ctx.webhookSecret, Buffer.from(body))}`,
      'x-rollgate-delivery': randomBytes(8).toString('hex'),
    },
    body,
  });
  const text = await response.text();
  if (response.status !== 202) {
    throw new DemoScenarioError(
      'webhook',
      `webhook answered ${response.status}, expected 202: ${clip(text)}`,
    );
  }
}

/** Commits a new image with the git CLI, pushes it and sends the webhook, printing what it did. */
async function pushImage(ctx: DemoContext, image: string, message: string): Promise<string> {
  const commit = await ctx.repo.commitImage(image, message);
  ctx.out.write(
    `  [${elapsed(ctx)}] git push: ${commit.slice(0, 7)} "${message}" (image ${imageTag(image)})\n`,
  );
  await sendPushWebhook(ctx);
  ctx.out.write(`  [${elapsed(ctx)}] webhook sent: POST /webhooks/generic → 202 Accepted\n`);
  return commit;
}

/**
 * Watches the rollout (staging's unless told) every 250 ms, printing a progress line whenever it changes and
 * at least every second, until `done` holds or the scenario times out. Returns the last snapshot and whether
 * `done` held. Lines about another rollout than staging's start with `label`.
 */
async function watchUntil(
  ctx: DemoContext,
  done: (snapshot: RolloutSnapshot) => boolean,
  observe: (snapshot: RolloutSnapshot) => void = () => undefined,
  rollout: { namespace: string; name: string; label?: string } = DEMO_ROLLOUT,
): Promise<{ reached: boolean; last?: RolloutSnapshot }> {
  const label = rollout.label ?? '';
  const deadline = performance.now() + ctx.timeoutMs;
  let lastLine = '';
  let lastPrintedAt = 0;
  let last: RolloutSnapshot | undefined;
  for (;;) {
    if (ctx.signal?.aborted) return { reached: false, ...(last ? { last } : {}) };
    let line: string;
    try {
      const snapshot = await readRolloutSnapshot(ctx.clients, rollout);
      if (snapshot) {
        last = snapshot;
        observe(snapshot);
      }
      line = snapshot
        ? `${label}${describeSnapshot(snapshot)}`
        : `waiting for Rollout ${rollout.namespace}/${rollout.name} to appear`;
    } catch (err) {
      line = `${label}cannot read the rollout: ${err instanceof Error ? err.message : String(err)}`;
    }
    const reached = last !== undefined && done(last);
    const now = performance.now();
    if (line !== lastLine || now - lastPrintedAt >= PRINT_EVERY_MS || reached) {
      ctx.out.write(`  [${elapsed(ctx)}] ${clip(line)}\n`);
      lastLine = line;
      lastPrintedAt = now;
    }
    if (reached) return { reached: true, ...(last ? { last } : {}) };
    if (now > deadline) return { reached: false, ...(last ? { last } : {}) };
    await sleep(POLL_MS, ctx.signal);
  }
}

function isSettledOn(snapshot: RolloutSnapshot, image: string): boolean {
  const { view } = snapshot;
  return (
    view.phase === 'Healthy' &&
    stableImage(snapshot) === image &&
    view.currentPodHash === view.stableRS &&
    view.replicas.available >= view.replicas.desired
  );
}

function resultFrom(
  base: { name: string; expected: string; startedAt: number },
  ok: boolean,
  detail: string,
  last: RolloutSnapshot | undefined,
): DemoScenarioResult {
  const result: DemoScenarioResult = {
    name: base.name,
    expected: base.expected,
    ok,
    detail,
    durationMs: Math.round(performance.now() - base.startedAt),
  };
  if (last) {
    result.phase = last.view.phase;
    result.aborted = last.view.aborted;
    if (last.view.message !== undefined) result.message = last.view.message;
    const stable = stableImage(last);
    if (stable !== undefined) result.stableImage = stable;
  }
  return result;
}

function describeLast(last: RolloutSnapshot | undefined): string {
  if (!last) return 'the Rollout never appeared in the cluster';
  const { view } = last;
  return `last seen: phase ${view.phase}${view.message ? ` (${clip(view.message)})` : ''}, stable ${imageTag(stableImage(last))}, newest ${imageTag(currentImage(last))}`;
}

function banner(ctx: DemoContext, title: string): void {
  ctx.out.write(`\n▶ ${title}\n`);
}

async function firstSync(ctx: DemoContext): Promise<DemoScenarioResult> {
  const base = {
    name: 'first sync',
    expected: `Rollout demo Healthy on ${imageTag(DEMO_IMAGES.first)}, 5/5 available (and prod's on ${imageTag(DEMO_IMAGES.first)})`,
    startedAt: performance.now(),
  };
  banner(
    ctx,
    `1/${SCENARIOS} First sync: the seed commit (${imageTag(DEMO_IMAGES.first)}) becomes the stable revision`,
  );
  await sendPushWebhook(ctx);
  ctx.out.write(`  [${elapsed(ctx)}] webhook sent for the seed commit\n`);
  const { reached, last } = await watchUntil(ctx, (s) => isSettledOn(s, DEMO_IMAGES.first));
  if (!reached) return resultFrom(base, false, `did not become Healthy in time; ${describeLast(last)}`, last);
  // The same commit holds prod's copy; the promotion scenario needs it stable before a canary can run there.
  const prod = await watchUntil(ctx, (s) => isSettledOn(s, DEMO_IMAGES.first), undefined, {
    ...PROD_ROLLOUT,
    label: 'prod: ',
  });
  if (!prod.reached)
    return resultFrom(
      base,
      false,
      `staging is Healthy, prod did not become Healthy in time; ${describeLast(prod.last)}`,
      last,
    );
  return resultFrom(base, true, 'applied from Git and Healthy with every replica available (prod too)', last);
}

async function canaryWalk(ctx: DemoContext): Promise<DemoScenarioResult> {
  const base = {
    name: 'canary',
    expected: `canary ${imageTag(DEMO_IMAGES.canary)} walks 20% → 50% → 80% and is promoted`,
    startedAt: performance.now(),
  };
  banner(
    ctx,
    `2/${SCENARIOS} Canary: commit image ${imageTag(DEMO_IMAGES.canary)}; the canary walks its steps to Healthy`,
  );
  await pushImage(ctx, DEMO_IMAGES.canary, 'demo: release 1.1.0');
  const weights = new Set<number>();
  const { reached, last } = await watchUntil(
    ctx,
    (s) => isSettledOn(s, DEMO_IMAGES.canary),
    (s) => {
      const w = s.view.weights.canary;
      if (currentImage(s) === DEMO_IMAGES.canary && w > 0 && w < 100) weights.add(w);
    },
  );
  const walked = [...weights].sort((a, b) => a - b);
  if (!reached) return resultFrom(base, false, `not promoted in time; ${describeLast(last)}`, last);
  if (walked.length === 0)
    return resultFrom(
      base,
      false,
      'became stable without any canary weight being seen: the steps were skipped',
      last,
    );
  return resultFrom(
    base,
    true,
    `canary weights seen ${walked.map((w) => `${w}%`).join(' → ')}, then promoted`,
    last,
  );
}

async function supersede(ctx: DemoContext): Promise<DemoScenarioResult> {
  const base = {
    name: 'supersede',
    expected: `${imageTag(DEMO_IMAGES.newest)} replaces the running canary ${imageTag(DEMO_IMAGES.superseded)} and completes`,
    startedAt: performance.now(),
  };
  banner(
    ctx,
    `3/${SCENARIOS} Supersede: commit ${imageTag(DEMO_IMAGES.superseded)}, then ${imageTag(DEMO_IMAGES.newest)} while the first is mid-canary`,
  );
  await pushImage(ctx, DEMO_IMAGES.superseded, 'demo: release 1.2.0');
  const midCanary = await watchUntil(
    ctx,
    (s) =>
      currentImage(s) === DEMO_IMAGES.superseded &&
      stableImage(s) === DEMO_IMAGES.canary &&
      (s.view.currentStepIndex ?? 0) >= 2 &&
      s.view.weights.canary > 0,
  );
  if (!midCanary.reached)
    return resultFrom(
      base,
      false,
      `${imageTag(DEMO_IMAGES.superseded)} never got mid-canary; ${describeLast(midCanary.last)}`,
      midCanary.last,
    );
  ctx.out.write(
    `  [${elapsed(ctx)}] ${imageTag(DEMO_IMAGES.superseded)} is mid-canary at ${midCanary.last?.view.weights.canary ?? 0}%: pushing ${imageTag(DEMO_IMAGES.newest)} now\n`,
  );
  await pushImage(ctx, DEMO_IMAGES.newest, 'demo: release 1.3.0 (supersedes 1.2.0)');
  let newestWasCanaryOverOldStable = false;
  const stablesSeen = new Set<string>();
  let supersededHash: string | undefined;
  const { reached, last } = await watchUntil(
    ctx,
    (s) => {
      if (!isSettledOn(s, DEMO_IMAGES.newest)) return false;
      // Done only once the superseded revision is scaled away as well.
      const old = s.view.replicaSets.find((rs) => rs.podTemplateHash === supersededHash);
      return old === undefined || old.desired === 0;
    },
    (s) => {
      const stable = stableImage(s);
      if (stable !== undefined) stablesSeen.add(stable);
      for (const [hash, image] of s.images) if (image === DEMO_IMAGES.superseded) supersededHash = hash;
      if (currentImage(s) === DEMO_IMAGES.newest && stable === DEMO_IMAGES.canary)
        newestWasCanaryOverOldStable = true;
    },
  );
  if (!reached) return resultFrom(base, false, `not completed in time; ${describeLast(last)}`, last);
  if (stablesSeen.has(DEMO_IMAGES.superseded))
    return resultFrom(
      base,
      false,
      `${imageTag(DEMO_IMAGES.superseded)} became stable although it was superseded`,
      last,
    );
  if (!newestWasCanaryOverOldStable)
    return resultFrom(
      base,
      false,
      `${imageTag(DEMO_IMAGES.newest)} was never seen as the canary over ${imageTag(DEMO_IMAGES.canary)}`,
      last,
    );
  return resultFrom(
    base,
    true,
    `${imageTag(DEMO_IMAGES.newest)} became the canary over stable ${imageTag(DEMO_IMAGES.canary)}, ${imageTag(DEMO_IMAGES.superseded)} was scaled to 0 and never promoted; ${imageTag(DEMO_IMAGES.newest)} completed`,
    last,
  );
}

async function abortOnPullFailure(ctx: DemoContext): Promise<DemoScenarioResult> {
  const base = {
    name: 'abort',
    expected: 'an image that cannot be pulled is aborted by the progress deadline; stable keeps serving',
    startedAt: performance.now(),
  };
  banner(ctx, `4/${SCENARIOS} Abort: commit an image the registry lacks (${imageTag(DEMO_IMAGES.missing)})`);
  await pushImage(ctx, DEMO_IMAGES.missing, 'demo: release 9.9.9 (its image was never pushed)');
  const { reached, last } = await watchUntil(
    ctx,
    (s) =>
      s.view.aborted &&
      currentImage(s) === DEMO_IMAGES.missing &&
      s.view.weights.canary === 0 &&
      stableImage(s) === DEMO_IMAGES.newest,
  );
  if (!reached) return resultFrom(base, false, `not aborted in time; ${describeLast(last)}`, last);
  const message = last?.view.message ?? '';
  if (!message.includes('ImagePullBackOff'))
    return resultFrom(
      base,
      false,
      `aborted, but the status message does not name ImagePullBackOff: "${clip(message)}"`,
      last,
    );
  return resultFrom(
    base,
    true,
    `aborted after progressDeadlineSeconds; traffic back to stable ${imageTag(DEMO_IMAGES.newest)}; the message names ImagePullBackOff`,
    last,
  );
}

/** The open promotion pull request on `branch` (the demo Rollout's unless told), if the forge has one. */
function openPromotionPull(ctx: DemoContext, branch: string = PROMOTION_BRANCH): DemoForgePull | undefined {
  return ctx.forge.pulls().find((p) => p.state === 'open' && p.head === branch);
}

/**
 * Polls the demo forge every 250 ms, printing a waiting line every second, until `find` returns something
 * or `timeoutMs` passes.
 */
async function waitOnForge<T>(
  ctx: DemoContext,
  what: string,
  find: () => T | undefined,
  timeoutMs: number,
): Promise<T | undefined> {
  const deadline = performance.now() + timeoutMs;
  let lastPrintedAt = performance.now();
  for (;;) {
    const found = find();
    if (found !== undefined || ctx.signal?.aborted) return found;
    const now = performance.now();
    if (now > deadline) return undefined;
    if (now - lastPrintedAt >= PRINT_EVERY_MS) {
      ctx.out.write(`  [${elapsed(ctx)}] demo forge: waiting for ${what}\n`);
      lastPrintedAt = now;
    }
    await sleep(POLL_MS, ctx.signal);
  }
}

/** The changed lines of a unified diff (no headers), each as `-old` / `+new`. */
function changedLines(diff: string): string[] {
  return diff
    .split('\n')
    .filter((line) => /^[-+]/.test(line) && !/^(?:---|\+\+\+) /.test(line))
    .map((line) => `${line[0] ?? ''} ${line.slice(1).trim()}`);
}

/**
 * Merges pull request `number` through the forge's API as a reviewer would, guarded by the head they looked
 * at, then sends the push webhook the merge calls for; returns the merge commit. Throws what the forge says.
 */
async function mergeAsReviewer(ctx: DemoContext, number: number): Promise<string> {
  const reviewer = createForge({
    provider: 'gitea',
    apiUrl: ctx.forge.apiUrl,
    repository: ctx.forge.repository,
    token: ctx.forge.token,
  });
  const reviewed: PullRequest = await reviewer.getPullRequest(number);
  const { mergeCommitSha } = await reviewer.merge(number, reviewed.headSha);
  ctx.out.write(
    `  [${elapsed(ctx)}] merged #${number} through the forge API at head ${reviewed.headSha.slice(0, 7)}: merge commit ${mergeCommitSha.slice(0, 7)} on ${reviewed.base}\n`,
  );
  await sendPushWebhook(ctx);
  ctx.out.write(
    `  [${elapsed(ctx)}] webhook sent: POST /webhooks/generic → 202 Accepted (the merge moved main)\n`,
  );
  return mergeCommitSha;
}

async function promotion(ctx: DemoContext): Promise<DemoScenarioResult> {
  const newest = imageTag(DEMO_IMAGES.newest);
  const missing = imageTag(DEMO_IMAGES.missing);
  const title = `Promote ${DEMO_ROLLOUT.name} to ${newest}`;
  const base = {
    name: 'promotion',
    expected: `one pull request, promoting ${newest} (none for ${missing}), merged; prod walks its canary to Healthy on ${newest}`,
    startedAt: performance.now(),
  };
  banner(
    ctx,
    `5/${SCENARIOS} Promotion: staging's last healthy revision (${newest}) goes to prod through a pull request on the demo forge`,
  );
  const pull = await waitOnForge(
    ctx,
    `the pull request "${title}"`,
    () => {
      const open = openPromotionPull(ctx);
      return open?.title === title ? open : undefined;
    },
    ctx.timeoutMs,
  );
  if (pull === undefined)
    return resultFrom(
      base,
      false,
      `no open pull request "${title}" on the demo forge; it has ${
        ctx.forge
          .pulls()
          .map((p) => `#${p.number} "${p.title}" (${p.state})`)
          .join(', ') || 'none'
      }`,
      undefined,
    );
  ctx.out.write(`  [${elapsed(ctx)}] pull request #${pull.number} "${pull.title}" open: ${pull.url}\n`);
  ctx.out.write(`  [${elapsed(ctx)}] diff of ${pull.head} → ${pull.base}:\n`);
  for (const line of changedLines(await ctx.forge.diff(pull.number)))
    ctx.out.write(`              ${clip(line)}\n`);
  // Rollgate says on its pull request that a newer revision aborted in staging; shown when it is there.
  const abortNote = await waitOnForge(
    ctx,
    `Rollgate's comment on #${pull.number} about the aborted revision`,
    () => openPromotionPull(ctx)?.comments.find((c) => c.includes('aborted')),
    ABORT_COMMENT_WAIT_MS,
  );
  if (abortNote !== undefined)
    ctx.out.write(
      `  [${elapsed(ctx)}] comment on #${pull.number}: ${clip(abortNote.split('\n')[0] ?? '')}\n`,
    );

  let mergeCommitSha: string;
  try {
    mergeCommitSha = await mergeAsReviewer(ctx, pull.number);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return resultFrom(base, false, `merging #${pull.number} failed: ${clip(message)}`, undefined);
  }

  const weights = new Set<number>();
  const { reached, last } = await watchUntil(
    ctx,
    (s) => isSettledOn(s, DEMO_IMAGES.newest),
    (s) => {
      const w = s.view.weights.canary;
      if (currentImage(s) === DEMO_IMAGES.newest && w > 0 && w < 100) weights.add(w);
    },
    { ...PROD_ROLLOUT, label: 'prod: ' },
  );
  // The kustomize scenario's promotion has a branch of its own; this one counts only the demo Rollout's.
  const pulls = ctx.forge.pulls().filter((p) => p.head === PROMOTION_BRANCH);
  const titles = pulls.find((p) => p.number === pull.number)?.titles ?? pull.titles;
  const result = (ok: boolean, detail: string): DemoScenarioResult => ({
    ...resultFrom(base, ok, detail, last),
    pullRequest: { number: pull.number, url: pull.url, title: pull.title, mergeCommitSha },
  });
  if (!reached) return result(false, `prod not Healthy on ${newest} in time; ${describeLast(last)}`);
  const walked = [...weights].sort((a, b) => a - b);
  if (walked.length === 0)
    return result(false, `prod became stable on ${newest} without any canary weight being seen`);
  const forMissing = pulls.filter((p) => p.titles.some((t) => t.includes(missing)));
  if (forMissing.length > 0)
    return result(
      false,
      `a pull request promoted ${missing}: #${forMissing.map((p) => p.number).join(', #')}`,
    );
  if (pulls.length !== 1) return result(false, `${pulls.length} pull requests were opened, expected one`);
  return result(
    true,
    `one pull request #${pull.number} (${titles.map((t) => t.replace(/^Promote \S+ to /, '')).join(' → ')}, none for ${missing}) merged; prod canary ${walked.map((w) => `${w}%`).join(' → ')}, Healthy on ${newest}`,
  );
}

/** The files a unified diff changes (its `+++ b/…` lines). */
function changedFiles(diff: string): string[] {
  return [...diff.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1] ?? '');
}

/**
 * The kustomize layout end to end: staging's overlay gets a new tag in its `images:`, staging's canary runs
 * while prod's Rollout stays as it was, the promotion's pull request edits prod's kustomization.yaml, and
 * its merge runs prod's canary.
 */
async function kustomizeOverlays(ctx: DemoContext): Promise<DemoScenarioResult> {
  const fromTag = ctx.webTag;
  const toTag = nextTag(fromTag);
  const [from, to] = [`${KUSTOMIZE_IMAGE}:${fromTag}`, `${KUSTOMIZE_IMAGE}:${toTag}`];
  const stagingFile = `${KUSTOMIZE_LAYOUT.staging}/kustomization.yaml`;
  const prodFile = `${KUSTOMIZE_LAYOUT.prod}/kustomization.yaml`;
  const title = `Promote ${WEB_STAGING.name} to ${toTag}`;
  const base = {
    name: 'kustomize',
    expected: `staging's overlay at ${toTag} runs staging's canary to Healthy, prod untouched; the pull request edits ${prodFile}; its merge runs prod's canary to Healthy on ${toTag}`,
    startedAt: performance.now(),
  };
  banner(
    ctx,
    `${SCENARIOS}/${SCENARIOS} Kustomize: one base, a staging and a prod overlay (examples/kustomize); a new tag in staging's images: runs staging's canary, prod gets it through a pull request`,
  );
  // Both overlays were rendered and applied from the seed commit, beside the plain folders.
  for (const rollout of [WEB_STAGING, WEB_PROD]) {
    const seeded = await watchUntil(ctx, (s) => isSettledOn(s, from), undefined, rollout);
    if (!seeded.reached)
      return resultFrom(
        base,
        false,
        `${rollout.namespace}/${rollout.name} did not become Healthy on ${fromTag} from the seed commit (is kubectl or kustomize on PATH? see Rollgate's log); ${describeLast(seeded.last)}`,
        seeded.last,
      );
  }
  const prodBefore = await readRolloutSnapshot(ctx.clients, WEB_PROD);
  const prodRevision = prodBefore?.view.currentPodHash;

  const commit = await ctx.repo.commitEdit(
    stagingFile,
    (text) => withImageTag(text, KUSTOMIZE_IMAGE, toTag, stagingFile),
    `web: staging runs ${toTag}`,
  );
  ctx.out.write(
    `  [${elapsed(ctx)}] git push: ${commit.slice(0, 7)} "web: staging runs ${toTag}" (${stagingFile}: images newTag ${fromTag} → ${toTag})\n`,
  );
  await sendPushWebhook(ctx);
  ctx.out.write(`  [${elapsed(ctx)}] webhook sent: POST /webhooks/generic → 202 Accepted\n`);
  const stagingWeights = new Set<number>();
  const staging = await watchUntil(
    ctx,
    (s) => isSettledOn(s, to),
    (s) => {
      const w = s.view.weights.canary;
      if (currentImage(s) === to && w > 0 && w < 100) stagingWeights.add(w);
    },
    WEB_STAGING,
  );
  if (!staging.reached)
    return resultFrom(
      base,
      false,
      `staging not Healthy on ${toTag} in time; ${describeLast(staging.last)}`,
      staging.last,
    );
  if (stagingWeights.size === 0)
    return resultFrom(
      base,
      false,
      `staging became stable on ${toTag} without any canary weight being seen`,
      staging.last,
    );
  const prodAfter = await readRolloutSnapshot(ctx.clients, WEB_PROD);
  if (
    prodAfter === undefined ||
    prodAfter.view.currentPodHash !== prodRevision ||
    stableImage(prodAfter) !== from
  )
    return resultFrom(
      base,
      false,
      `prod changed before any pull request was merged; ${describeLast(prodAfter)}`,
      prodAfter,
    );
  ctx.out.write(
    `  [${elapsed(ctx)}] ${WEB_PROD.label}untouched: still revision ${prodRevision ?? '-'} on ${fromTag}, no new ReplicaSet (its overlay did not change)\n`,
  );

  const pull = await waitOnForge(
    ctx,
    `the pull request "${title}"`,
    () => {
      const open = openPromotionPull(ctx, WEB_PROMOTION_BRANCH);
      return open?.title === title ? open : undefined;
    },
    ctx.timeoutMs,
  );
  if (pull === undefined)
    return resultFrom(base, false, `no open pull request "${title}" on the demo forge`, prodAfter);
  ctx.out.write(`  [${elapsed(ctx)}] pull request #${pull.number} "${pull.title}" open: ${pull.url}\n`);
  const diff = await ctx.forge.diff(pull.number);
  const files = changedFiles(diff);
  ctx.out.write(`  [${elapsed(ctx)}] diff of ${pull.head} → ${pull.base} (${files.join(', ')}):\n`);
  const lines = changedLines(diff);
  for (const line of lines) ctx.out.write(`              ${clip(line)}\n`);
  const edited = files.length === 1 && files[0] === prodFile;
  if (!edited)
    return resultFrom(
      base,
      false,
      `the pull request changes ${files.join(', ') || 'nothing'}, not ${prodFile} alone`,
      prodAfter,
    );
  let mergeCommitSha: string;
  try {
    mergeCommitSha = await mergeAsReviewer(ctx, pull.number);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return resultFrom(base, false, `merging #${pull.number} failed: ${clip(message)}`, prodAfter);
  }

  const prodWeights = new Set<number>();
  const prod = await watchUntil(
    ctx,
    (s) => isSettledOn(s, to),
    (s) => {
      const w = s.view.weights.canary;
      if (currentImage(s) === to && w > 0 && w < 100) prodWeights.add(w);
    },
    WEB_PROD,
  );
  const result = (ok: boolean, detail: string): DemoScenarioResult => ({
    ...resultFrom(base, ok, detail, prod.last),
    pullRequest: { number: pull.number, url: pull.url, title: pull.title, mergeCommitSha },
  });
  if (!prod.reached) return result(false, `prod not Healthy on ${toTag} in time; ${describeLast(prod.last)}`);
  if (prodWeights.size === 0)
    return result(false, `prod became stable on ${toTag} without any canary weight being seen`);
  const walk = (weights: Set<number>): string =>
    [...weights]
      .sort((a, b) => a - b)
      .map((w) => `${w}%`)
      .join(' → ');
  return result(
    true,
    `staging canary ${walk(stagingWeights)} to Healthy on ${toTag}, prod untouched; #${pull.number} edited ${prodFile} (newTag ${fromTag} → ${toTag}), merged; prod canary ${walk(prodWeights)}, Healthy on ${toTag}`,
  );
}

function printSummary(ctx: DemoContext, scenarios: DemoScenarioResult[], totalMs: number): void {
  ctx.out.write('\n━━ Summary ━━\n');
  for (const s of scenarios) {
    ctx.out.write(
      `  ${s.ok ? '✔' : '✘'} ${s.name.padEnd(11)} ${(s.durationMs / 1000).toFixed(1).padStart(5)}s  ${s.detail}\n`,
    );
    if (!s.ok) ctx.out.write(`      expected: ${s.expected}\n`);
  }
  const abort = scenarios.find((s) => s.name === 'abort');
  if (abort?.message) ctx.out.write(`  abort message: ${abort.message}\n`);
  const passed = scenarios.filter((s) => s.ok).length;
  ctx.out.write(
    `  ${passed}/${scenarios.length} scenarios reached their expected outcome in ${(totalMs / 1000).toFixed(1)}s\n`,
  );
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function printHowToContinue(
  ctx: DemoContext,
  kubeconfigPath: string,
  logPath: string,
  keepRunning: boolean,
): void {
  const body = pushNoticeBody(ctx);
  const repoApi = `${ctx.forge.apiUrl}/repos/${ctx.forge.repository}`;
  const lines = [
    '',
    '━━ Continue by hand ━━',
    keepRunning
      ? '  Everything keeps running until you press Ctrl-C. In another terminal:'
      : '  (run `npm run demo` in a terminal, without --exit, to keep everything running and try these)',
    `  Dashboard: ${ctx.dashboardUrl}  (rollouts, the promotion pipeline and its pull request, live)`,
    `  export KUBECONFIG=${kubeconfigPath}`,
    '  kubectl get rollouts.rollgate.dev,rs,pods',
    '  npx rollgate get rollout demo --watch         # staging (namespace default): the revision tree, live',
    '  npx rollgate get rollout demo -n prod --watch # prod',
    '  npx rollgate get rollout staging-web -n web-staging --watch # the kustomize layout: staging overlay',
    '  npx rollgate list rollouts -A',
    `  git clone ${ctx.repo.url} demo && cd demo`,
    `  # edit staging/rollout.yaml (e.g. the image tag), or the newTag in ${KUSTOMIZE_LAYOUT.staging}/kustomization.yaml, then:`,
    '  git commit -am "my change" && git push',
    '  # Rollgate polls every 10 s; the webhook a Git server would send makes it follow at once:',
    `  BODY=${shellQuote(body)}`,
    `  SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac ${shellQuote(ctx.webhookSecret)} | sed 's/^.* //')`,
    `  curl -sS -X POST ${ctx.webhookUrl} -H 'content-type: application/json' -H "X-Rollgate-Signature: sha256=$SIG" -d "$BODY"`,
    '  # Once staging finishes a healthy canary, its promotion pull request opens on the demo forge:',
    `  TOKEN=${shellQuote(ctx.forge.token)}`,
    `  curl -sS -H "Authorization: token $TOKEN" '${repoApi}/pulls?state=open'`,
    '  # Merge it as a reviewer would (N: its number, SHA: its head.sha), then send the webhook above again:',
    `  curl -sS -X POST ${repoApi}/pulls/N/merge -H "Authorization: token $TOKEN" -H 'content-type: application/json' -d '{"Do":"merge","head_commit_id":"SHA"}'`,
    `  Rollgate's own log: ${logPath}`,
    '',
  ];
  ctx.out.write(`${lines.join('\n')}\n`);
}

/** The story ends on the tree `rollgate get rollout` prints for the rollout it moved last. */
async function printLastRollout(ctx: DemoContext, key: { namespace: string; name: string }): Promise<void> {
  const tree = await readRolloutTree(ctx.clients, key);
  if (tree === undefined) return;
  const flag = key.namespace === 'default' ? '' : ` -n ${key.namespace}`;
  ctx.out.write(`━━ rollgate get rollout ${key.name}${flag} ━━\n`);
  ctx.out.write(formatRolloutTree(tree, { now: new Date(), color: false }));
}

/**
 * Runs the demo: finds Redis, starts the sandbox, the Git server, the demo forge and Rollgate, plays the six scenarios
 * with live progress, prints a summary and how to continue, then (if asked) keeps running until
 * `keepRunningUntil` resolves. Always stops what it started and deletes its Redis keys.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const out = options.out;
  const startedAt = performance.now();
  const kubeconfigPath = resolve(options.kubeconfigPath ?? '.rollgate/demo.kubeconfig');
  const logPath = resolve(options.logPath ?? '.rollgate/demo.log');
  const runId = randomBytes(4).toString('hex');
  const prefix = `rollgate-demo-${runId}`;
  const webhookSecret = randomBytes(16).toString('hex');
  const parts: Array<{ what: string; stop: () => Promise<unknown> }> = [];
  let logStream: WriteStream | undefined;

  out.write('Rollgate demo: a canary Rollout in Git, driven into a sandbox cluster.\n\n');
  const redis = await findDemoRedis({
    ...(options.redisUrl !== undefined ? { url: options.redisUrl } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  const redisOrigin = {
    given: 'from --redis',
    REDIS_URL: 'from REDIS_URL',
    local: 'already running locally',
    private: 'a private redis-server started for this demo',
  }[redis.origin];
  out.write(
    `  Redis       ${redactUrl(redis.url)} (${redisOrigin}); keys under ${bullPrefix(prefix)}, deleted at the end\n`,
  );

  let result: DemoResult;
  let keysDeleted: number;
  try {
    const sandbox = await startSandbox({
      readyDelayMs: options.readyDelayMs ?? 500,
      missingImages: [DEMO_IMAGES.missing],
    });
    parts.push({ what: 'sandbox', stop: () => sandbox.stop() });
    await sandbox.writeKubeconfig(kubeconfigPath);
    out.write(`  Cluster     sandbox API at ${sandbox.url}; kubeconfig ${kubeconfigPath}\n`);

    const tmp = await mkdtemp(join(tmpdir(), 'rollgate-demo-'));
    parts.push({ what: 'temporary files', stop: () => rm(tmp, { recursive: true, force: true }) });
    let webTag = '';
    const repo = await createDemoRepository({
      dir: tmp,
      seedDir: options.seedDir ?? DEFAULT_SEED_DIR,
      rolloutFile: 'staging/rollout.yaml',
      addToSeed: async (workDir) => {
        webTag = await seedKustomizeLayout(
          options.kustomizeExampleDir ?? DEFAULT_KUSTOMIZE_EXAMPLE_DIR,
          workDir,
        );
      },
    });
    parts.push({ what: 'git server', stop: () => repo.stop() });
    out.write(
      `  Git         ${repo.url} (seeded from examples/demo/: staging/ and prod/, and examples/kustomize/: apps/web/, pushed with git)\n`,
    );
    const forge = await startDemoForge({ bareDir: repo.bareDir, repository: FORGE_REPOSITORY });
    parts.push({ what: 'demo forge', stop: () => forge.stop() });
    out.write(
      `  Forge       ${forge.apiUrl} (the demo's stand-in for Gitea/Forgejo), repository ${forge.repository}\n`,
    );

    await mkdir(dirname(logPath), { recursive: true });
    logStream = createWriteStream(logPath, { flags: 'w' });
    const logger: Logger = createLogger({
      level: 'info',
      format: 'json',
      name: 'rollgate',
      destination: logStream,
    });
    const config = configSchema.parse({
      log: { level: 'info', format: 'json' },
      redis: { url: redis.url, prefix },
      kubernetes: { kubeconfig: kubeconfigPath },
      server: { host: '127.0.0.1', port: options.port ?? 0 },
      git: { cacheDir: join(tmp, 'git-cache') },
      sources: [
        {
          name: 'staging',
          url: repo.url,
          branch: 'main',
          path: 'staging',
          namespace: DEMO_ROLLOUT.namespace,
          interval: '10s',
          prune: true,
        },
        {
          name: 'prod',
          url: repo.url,
          branch: 'main',
          path: 'prod',
          namespace: PROD_ROLLOUT.namespace,
          interval: '10s',
          prune: true,
        },
        // The kustomize layout: one source per overlay, rendered (`render: auto` finds the kustomization).
        {
          name: 'web-staging',
          url: repo.url,
          branch: 'main',
          path: KUSTOMIZE_LAYOUT.staging,
          namespace: WEB_STAGING.namespace,
          interval: '10s',
          prune: true,
        },
        {
          name: 'web-prod',
          url: repo.url,
          branch: 'main',
          path: KUSTOMIZE_LAYOUT.prod,
          namespace: WEB_PROD.namespace,
          interval: '10s',
          prune: true,
        },
      ],
      promotions: [
        {
          name: PROMOTION,
          from: { source: 'staging' },
          to: { source: 'prod' },
          pullRequest: {
            provider: 'gitea',
            apiUrl: forge.apiUrl,
            repository: forge.repository,
            token: forge.token,
          },
        },
        {
          name: WEB_PROMOTION,
          from: { source: 'web-staging' },
          to: { source: 'web-prod' },
          pullRequest: {
            provider: 'gitea',
            apiUrl: forge.apiUrl,
            repository: forge.repository,
            token: forge.token,
          },
        },
      ],
      webhooks: { generic: { secret: webhookSecret } },
    });
    const clients = createKubeClients(sandbox.kubeConfig);
    for (const namespace of [PROD_ROLLOUT.namespace, WEB_STAGING.namespace, WEB_PROD.namespace])
      await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
    const runtime = openRuntime(config, {
      logger,
      kube: { clients, namespace: 'default', source: 'flag', origin: sandbox.url },
    });
    let rollgate: RunningProcess;
    try {
      rollgate = await startProcess(runtime, {
        role: 'all',
        metrics: createRollgateMetrics(),
        redisCheckIntervalMs: 2_000,
      });
    } catch (err) {
      await runtime.close();
      throw err;
    }
    parts.push({ what: 'rollgate', stop: () => rollgate.stop() });
    const webhookUrl = `${rollgate.http.url}/webhooks/generic`;
    out.write(`  Rollgate    poller, sync and reconcile workers; webhooks at ${webhookUrl}\n`);
    out.write(`              log: ${logPath}\n`);
    // Read-only (no actions token in the demo): watch the story in a browser while it plays.
    const dashboardUrl = `${rollgate.http.url}/ui/`;
    out.write(`  Dashboard   ${dashboardUrl}  (open it now: rollouts, steps and the promotion, live)\n`);

    const ctx: DemoContext = {
      out,
      clients,
      repo,
      forge,
      webhookUrl,
      webhookSecret,
      dashboardUrl,
      webTag,
      startedAt,
      timeoutMs: options.scenarioTimeoutMs ?? 60_000,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const scenarios: DemoScenarioResult[] = [];
    for (const scenario of [
      firstSync,
      canaryWalk,
      supersede,
      abortOnPullFailure,
      promotion,
      kustomizeOverlays,
    ]) {
      if (options.signal?.aborted) break;
      const outcome = await scenario(ctx);
      // Cut short by Ctrl-C: not an outcome, so not reported as a miss.
      if (options.signal?.aborted && !outcome.ok) break;
      scenarios.push(outcome);
      out.write(`  ${outcome.ok ? '✔' : '✘'} ${outcome.name}: ${outcome.detail}\n`);
      // Each scenario builds on the one before; after a miss the rest would only fail for that reason.
      if (!outcome.ok) break;
    }
    const durationMs = Math.round(performance.now() - startedAt);
    printSummary(ctx, scenarios, durationMs);
    if (options.signal?.aborted) out.write('  interrupted: the story did not finish\n');
    const keepRunning = options.keepRunningUntil !== undefined && !options.signal?.aborted;
    if (!options.signal?.aborted) {
      printHowToContinue(ctx, kubeconfigPath, logPath, keepRunning);
      const last = scenarios.at(-1);
      if (last !== undefined)
        await printLastRollout(
          ctx,
          { promotion: PROD_ROLLOUT, kustomize: WEB_PROD }[last.name] ?? DEMO_ROLLOUT,
        );
    }
    if (keepRunning) await options.keepRunningUntil;
    result = {
      ok: scenarios.length === SCENARIOS && scenarios.every((s) => s.ok),
      scenarios,
      durationMs,
      repoUrl: repo.url,
      webhookUrl,
      dashboardUrl,
      forgeApiUrl: forge.apiUrl,
      pulls: forge.pulls(),
      kubeconfigPath,
      redis: { url: redactUrl(redis.url), origin: redis.origin },
      keysDeleted: 0,
    };
  } finally {
    await stopAll(parts, out);
    keysDeleted = await deleteDemoKeys(redis.url, `${bullPrefix(prefix)}:*`).catch(() => 0);
    await redis.stop();
    logStream?.end();
  }
  return { ...result, keysDeleted };
}

/** Stops in reverse order of start; a failure to stop one part is reported, never hides another. */
async function stopAll(
  parts: Array<{ what: string; stop: () => Promise<unknown> }>,
  out: DemoOutput,
): Promise<void> {
  for (const part of parts.reverse()) {
    try {
      await part.stop();
    } catch (err) {
      out.write(
        `  warning: stopping the ${part.what} failed: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    }
  }
}
