// The sandbox's kubelet as a client of any API server: pod status written through pods/status as the pods' annotations say.
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { toPlainObject } from '../kube/client.ts';
import { isNotFound, kubeCall } from '../kube/errors.ts';
import type { Logger } from '../log/logger.ts';
import { watchWithRestart, type RunningWatch } from '../kube/watch-with-restart.ts';
import { defaultControllerOptions, type ControllerOptions } from './controllers/controller-options.ts';
import type { KubeObject } from './controllers/kube-object.ts';
import { kubeletStatus } from './controllers/kubelet-status.ts';

export interface KubeletClientOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  controller?: Partial<ControllerOptions>;
  now?: () => Date;
}

/** A running kubelet stand-in. */
export interface KubeletClient {
  /** Pod status writes made so far (tests and the log read it). */
  readonly writes: number;
  stop(): void;
}

const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

const podKey = (pod: KubeObject): string => `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;

/**
 * Watches every pod of the cluster and writes the status the sandbox's simulated kubelet computes for
 * it (`kubeletStatus`: the `sandbox.rollgate.dev/behavior` annotation, the missing images, the ready
 * delay), again at each time that status is due to change. Against a real API server without nodes
 * this makes pods become Ready, crash-loop or fail to pull as in the sandbox. Pods are not scheduled
 * (no binding): kube-apiserver deletes an unscheduled pod at once, with no graceful termination.
 */
export async function startKubeletClient(options: KubeletClientOptions): Promise<KubeletClient> {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const controller: ControllerOptions = { ...defaultControllerOptions, ...options.controller };
  const now = options.now ?? (() => new Date());
  const log = options.logger.child({ component: 'kubelet' });
  const pods = new Map<string, KubeObject>();
  const timers = new Map<string, NodeJS.Timeout>();
  // What this kubelet last wrote per pod: the server may normalize a status (drop empty fields), so a
  // status is compared with what was written, not what came back, or it would be written forever.
  const written = new Map<string, string>();
  let writes = 0;
  let stopped = false;

  const schedule = (key: string, at: Date | undefined): void => {
    clearTimeout(timers.get(key));
    timers.delete(key);
    if (at === undefined || stopped) return;
    const timer = setTimeout(() => void sync(key), Math.max(0, at.getTime() - now().getTime()) + 5);
    timer.unref();
    timers.set(key, timer);
  };

  // One status write per pod at a time. Two in flight (the first sync's, then the ready timer's a moment
  // later) can be applied in either order: the server would keep the older status while `written` holds
  // the newer, and the pod would never become Ready (no later event or timer rewrites it). A sync asked
  // for while a write is in flight runs once more after it, from the pod as it is then.
  const inFlight = new Set<string>();
  const syncAgain = new Set<string>();

  const sync = async (key: string): Promise<void> => {
    if (inFlight.has(key)) {
      syncAgain.add(key);
      return;
    }
    inFlight.add(key);
    try {
      await writeStatus(key);
    } finally {
      inFlight.delete(key);
    }
    if (syncAgain.delete(key)) await sync(key);
  };

  const writeStatus = async (key: string): Promise<void> => {
    const pod = pods.get(key);
    if (!pod || stopped) return;
    const result = kubeletStatus(pod, now(), controller);
    schedule(key, result.nextChangeAt);
    const text = JSON.stringify(result.status);
    if (written.get(key) === text) return;
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    try {
      // The kubelet owns the status: it is replaced whole (a JSON patch `add` replaces a member), with no
      // resourceVersion to conflict on. A merge patch would keep a container's old `state` beside the new.
      await kubeCall({ verb: 'patch', kind: 'Pod', namespace, name, subresource: 'status' }, () =>
        core.patchNamespacedPodStatus(
          { name, namespace, body: [{ op: 'add', path: '/status', value: result.status }] },
          JSON_PATCH,
        ),
      );
      written.set(key, text);
      writes += 1;
    } catch (err) {
      if (isNotFound(err)) return;
      log.warn({ pod: key, err: (err as Error).message }, 'pod status write failed; retrying in 1 s');
      schedule(key, new Date(now().getTime() + 1_000));
    }
  };

  const watch: RunningWatch = await watchWithRestart<KubeObject>({
    kubeConfig: options.kubeConfig,
    path: '/api/v1/pods',
    query: { allowWatchBookmarks: 'true' },
    onEvent: (type, object) => {
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
      const pod = toPlainObject<KubeObject>(object);
      const key = podKey(pod);
      if (type === 'DELETED') {
        pods.delete(key);
        written.delete(key);
        schedule(key, undefined);
        return;
      }
      pods.set(key, pod);
      void sync(key);
    },
    onEnded: (err, restart) => {
      if (restart.reason === 'failed')
        log.warn({ err: (err as Error | undefined)?.message, attempt: restart.attempt }, 'pod watch failed');
    },
  });
  log.info({ readyDelayMs: controller.readyDelayMs }, 'kubelet stand-in watching pods');
  return {
    get writes() {
      return writes;
    },
    stop() {
      stopped = true;
      watch.stop();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** The API server's client configuration from a kubeconfig file (loaded here so the CLI imports names only). */
export function kubeConfigFromFile(file: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(file);
  return kubeConfig;
}
