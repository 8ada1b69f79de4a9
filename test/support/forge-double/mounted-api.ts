// The controls every API mounted on the forge double (GitLab, Gitea) gives its tests: faults, webhooks, reset, stop.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Forge } from '../../../src/forge/forge.ts';
import type { ForgeContractHarness } from '../forge-contract.ts';
import { startHookReceiver, type ReceivedHook } from '../hook-receiver.ts';
import type { ForgeDouble } from './forge-double.ts';
import type { HookSender } from './hook-sender.ts';

/** What the GitLab and Gitea APIs of the double share. */
export interface MountedApi {
  readonly hooks: HookSender;
  rateLimitNext(count: number, kind: 'primary' | 'secondary'): void;
  serverErrorNext(count: number): void;
  reset(): void;
  /** Registers a webhook receiver (signed or authenticated with `secret` as the forge does). */
  onWebhook(url: string, secret: string): void;
}

/** The contract harness's faults, violations, reset and close for `api` mounted on `double`. */
export function mountedApiControls(
  double: ForgeDouble,
  api: MountedApi,
): Pick<ForgeContractHarness, 'rateLimitNext' | 'serverErrorNext' | 'violations' | 'reset' | 'close'> {
  return {
    rateLimitNext: (count, kind) => api.rateLimitNext(count, kind),
    serverErrorNext: (count) => api.serverErrorNext(count),
    violations: () => double.violations(),
    reset: () => {
      double.reset();
      api.reset();
    },
    close: async () => {
      await api.hooks.flush();
      await double.stop();
    },
  };
}

/**
 * One double with a mounted API for a describe block: started before all its tests, checked for violations and
 * reset after each, stopped (webhooks flushed) after all. Returns the started one; call it inside tests only.
 */
export function sharedMountedDouble<T>(
  start: () => Promise<T>,
  partsOf: (started: T) => { double: ForgeDouble; api: MountedApi },
): () => T {
  let started: T | undefined;
  const current = (): T => {
    if (started === undefined) throw new Error('the double is not started');
    return started;
  };
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    const { double, api } = partsOf(current());
    await api.hooks.flush();
    await double.stop();
  });
  afterEach(() => {
    const { double, api } = partsOf(current());
    const violations = double.violations();
    double.reset();
    api.reset();
    expect(violations).toEqual([]);
  });
  return current;
}

/**
 * Opens a pull request from a new branch onto `main` and merges it while a receiver at `path` is registered on
 * `api`; returns the one webhook delivery that caused (failing the test unless there is exactly one).
 */
export async function mergeWithHookReceiver(options: {
  api: MountedApi;
  forge: Forge;
  branch: () => Promise<{ name: string; sha: string }>;
  path: string;
  secret: string;
}): Promise<{ delivery: ReceivedHook; number: number; mergeCommitSha: string }> {
  const receiver = await startHookReceiver();
  try {
    options.api.onWebhook(receiver.url(options.path), options.secret);
    const head = await options.branch();
    const opened = await options.forge.openPullRequest({
      head: head.name,
      base: 'main',
      title: 'hook',
      body: '',
    });
    const { mergeCommitSha } = await options.forge.merge(opened.number, head.sha);
    await options.api.hooks.flush();
    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    if (!delivery) throw new Error('no delivery');
    return { delivery, number: opened.number, mergeCommitSha };
  } finally {
    await receiver.close();
  }
}
