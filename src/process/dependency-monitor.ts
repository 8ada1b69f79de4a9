// Checks the API server and Redis every few seconds while the process runs, recording each answer in the
// process's DependencyHealth (for /readyz and rollgate_dependency_up) and logging each change once.
import { VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { Redis } from 'ioredis';
import { makePooledApiClient, observeKubeRequests, type KubeClients } from '../kube/client.ts';
import { kubeCall } from '../kube/errors.ts';
import type { Logger } from '../log/logger.ts';
import { pingRedis } from '../queue/redis-ping.ts';
import type { Dependency, DependencyHealth } from '../server/dependency-health.ts';
import type { ClusterHandle, ClusterSet } from '../clusters/cluster-set.ts';

export interface DependencyMonitorOptions {
  health: DependencyHealth;
  clients: KubeClients;
  /** Every other cluster of the set is checked the same way, as `cluster/NAME` (default: none). */
  clusters?: ClusterSet;
  /** Told when a remote cluster answers again after failing (its sources are polled at once). */
  onClusterBack?: (cluster: string) => void;
  redis: Redis;
  logger: Logger;
  /** Between two rounds of checks (default 5 s). */
  intervalMs?: number;
  /** One check's time limit (default 3 s): an API server that does not answer is down. */
  timeoutMs?: number;
}

export interface RunningDependencyMonitor {
  /** One round of checks now (also what each interval runs). */
  checkNow(): Promise<void>;
  stop(): void;
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
};

/** Whether the process's own requests to one API server got an answer since the last round asked. */
interface AnswerWitness {
  /** True once since the last call if a request was answered 2xx; resets. */
  takeAnswered(): boolean;
  stop(): void;
}

function answerWitness(kubeConfig: KubeConfig): AnswerWitness {
  let answered = false;
  const stop = observeKubeRequests(kubeConfig, ({ code }) => {
    if (code.startsWith('2')) answered = true;
  });
  return {
    takeAnswered() {
      const was = answered;
      answered = false;
      return was;
    },
    stop,
  };
}

/**
 * Starts checking: `GET /version` on the API server (any authenticated identity may read it, so the
 * check needs no extra RBAC) and a Redis PING, every `intervalMs` from now on (a finished start has
 * just shown both answering). An API server that answered one of the process's own requests (2xx)
 * since the last round is up without a `GET /version`: a busy reconciler sends no probe (issue 37: it
 * was 0.1–0.5 of the requests per rollout, more with more processes), an idle one probes every round.
 */
export function startDependencyMonitor(options: DependencyMonitorOptions): RunningDependencyMonitor {
  const { health, logger } = options;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const version = makePooledApiClient(options.clients.kubeConfig, VersionApi);
  const log = logger.child({ component: 'dependencies' });
  const localAnswers = answerWitness(options.clients.kubeConfig);

  const record = async (dependency: Dependency, check: () => Promise<unknown>): Promise<void> => {
    const wasUp = health.state(dependency)?.up;
    const name = dependency.kind === 'cluster' ? `cluster ${dependency.cluster}` : dependency.kind;
    try {
      await check();
      health.up(dependency);
      if (wasUp === false) {
        log.info({ dependency: dependency.kind }, `${name} answers again`);
        if (dependency.kind === 'cluster') options.onClusterBack?.(dependency.cluster);
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      health.down(dependency, message);
      if (wasUp !== false)
        log.warn(
          { dependency: dependency.kind, err: message },
          `${name} is failing; work that needs it waits (see /readyz)`,
        );
    }
  };
  // One /version client per remote cluster, made at its first check (on its own pool and rate limit),
  // and the witness of its answers; both dropped once the cluster leaves the set.
  const remotes = new Map<ClusterHandle, { client: VersionApi; answers: AnswerWitness }>();
  const remoteOf = (cluster: ClusterHandle): { client: VersionApi; answers: AnswerWitness } => {
    let made = remotes.get(cluster);
    if (made === undefined) {
      const { kubeConfig } = cluster.kube.clients;
      made = { client: makePooledApiClient(kubeConfig, VersionApi), answers: answerWitness(kubeConfig) };
      remotes.set(cluster, made);
    }
    return made;
  };
  const forgetGone = (current: readonly ClusterHandle[]): void => {
    for (const [cluster, { answers }] of remotes)
      if (!current.includes(cluster)) {
        answers.stop();
        remotes.delete(cluster);
      }
  };
  /** `GET /version` unless the server answered the process since the last round. */
  const probe = (client: VersionApi, answers: AnswerWitness, what: string) => async (): Promise<void> => {
    if (answers.takeAnswered()) return;
    try {
      await withTimeout(
        kubeCall({ verb: 'get', kind: 'Version' }, () => client.getCode()),
        timeoutMs,
        what,
      );
    } finally {
      // The probe's own answer is no witness for the next round, or an idle process would probe every other round.
      answers.takeAnswered();
    }
  };
  const remoteClusters = (): ClusterHandle[] =>
    (options.clusters?.current() ?? []).filter((c) => c.name !== options.clusters?.localName);

  const checkNow = async (): Promise<void> => {
    const remoteNow = remoteClusters();
    forgetGone(remoteNow);
    await Promise.all([
      record({ kind: 'kubernetes' }, probe(version, localAnswers, 'get /version')),
      record({ kind: 'redis' }, () => pingRedis(options.redis, timeoutMs)),
      ...remoteNow.map((cluster) => {
        const { client, answers } = remoteOf(cluster);
        return record(
          { kind: 'cluster', cluster: cluster.name },
          probe(client, answers, `get /version of cluster ${cluster.name}`),
        );
      }),
    ]);
  };

  let round: Promise<void> | undefined;
  const timer = setInterval(() => {
    // A round still waiting for its time limit is not doubled.
    round ??= checkNow().finally(() => (round = undefined));
  }, options.intervalMs ?? 5_000);
  timer.unref();
  return {
    checkNow,
    stop() {
      clearInterval(timer);
      localAnswers.stop();
      forgetGone([]);
    },
  };
}
