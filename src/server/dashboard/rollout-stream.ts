// GET /api/v1/events: a watch on Rollouts per cluster, fanned out to every connected page as server-sent events.
import type { ServerResponse } from 'node:http';
import type { ClusterHandle, ClusterSet } from '../../clusters/cluster-set.ts';
import type { Logger } from '../../log/logger.ts';
import { listReplicaSetImages, parseRollout } from './rollout-reads.ts';
import { summarizeRollout } from './rollout-summary.ts';
import { drivenApiOfVersion } from '../../manifest/driven-api.ts';

/** Starts a watch on every Rollout (the process wires src/kube/watch-with-restart.ts). */
export type WatchRollouts = (handlers: {
  onEvent: (type: string, object: unknown) => void;
  /** The watch ran again after an end: events were missed, so pages must re-read the list. */
  onRestarted: () => void;
}) => Promise<{ stop(): void }>;

/** Starts the Rollout watch of one cluster (on that cluster's own connection). */
export type WatchClusterRollouts = (cluster: ClusterHandle) => WatchRollouts;

/**
 * Whether a page's reader may see Rollouts of `group` in `namespace` of `cluster` (a signed-in person:
 * their RBAC on that cluster); a page without one (a token) sees every event.
 */
export type StreamFilter = (cluster: string, namespace: string, group: string) => Promise<boolean>;

interface Subscriber {
  may: StreamFilter | undefined;
  /** A filtered page's events, one after another, so an answer that comes late cannot reorder them. */
  queue: Promise<void>;
}

/** Keeps proxies and load balancers from closing an idle stream (most cut at 60 s). */
const HEARTBEAT_MS = 15_000;

/**
 * The stream's events: `rollout` carries `{ type: 'ADDED' | 'MODIFIED', rollout: RolloutSummary }` (its
 * `cluster` set), `deleted` carries `{ cluster, namespace, name, group }`, `resync` says "read the list
 * again" (also when a cluster is added or removed). Each cluster has its own watch, so one cluster that
 * stops answering leaves the others' events flowing.
 */
export class RolloutStream {
  private readonly clients = new Map<ServerResponse, Subscriber>();
  /** The running watch of each cluster, with the handle it was started on. */
  private readonly watches = new Map<string, { handle: ClusterHandle; watch: Promise<{ stop(): void }> }>();
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The newest watch event per rollout: an older one whose ReplicaSet read finishes later is dropped. */
  private readonly latest = new Map<string, number>();
  private sequence = 0;

  constructor(
    private readonly clusters: ClusterSet,
    private readonly watchRollouts: WatchClusterRollouts,
    private readonly logger: Logger,
  ) {}

  /** Adds a page; the watch starts with the first one and stops after the last leaves. */
  subscribe(res: ServerResponse, may?: StreamFilter): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // nginx buffers responses by default, which would hold events back.
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n: connected\n\n');
    this.clients.set(res, { may, queue: Promise.resolve() });
    res.on('close', () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stopWatch();
    });
    if (this.unsubscribe === undefined) this.startWatches();
    this.heartbeat ??= setInterval(() => this.send(': keep-alive\n\n'), HEARTBEAT_MS).unref();
  }

  /** Ends every stream and the watch (the server is stopping). */
  close(): void {
    for (const res of this.clients.keys()) res.end();
    this.clients.clear();
    this.stopWatch();
  }

  private send(text: string): void {
    for (const res of this.clients.keys()) res.write(text);
  }

  /** An event to every page, or, with `about`, only to those whose reader may see that Rollout. */
  private event(
    name: string,
    data: unknown,
    about?: { cluster: string; namespace: string; group: string },
  ): void {
    const text = `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const [res, subscriber] of this.clients) {
      const { may } = subscriber;
      if (may === undefined || about === undefined) {
        res.write(text);
        continue;
      }
      subscriber.queue = subscriber.queue
        .then(() => may(about.cluster, about.namespace, about.group))
        .then(
          (allowed) => {
            if (allowed) res.write(text);
          },
          (err: unknown) => this.logger.debug({ err }, 'dashboard: could not review an event'),
        );
    }
  }

  private startWatches(): void {
    // Clusters registered or dropped while pages are open: their watches follow, and pages re-read the list.
    this.unsubscribe = this.clusters.subscribe((change) => {
      this.stopWatch(change.cluster.name);
      if (change.kind !== 'removed') this.startWatch(change.cluster);
      this.event('resync', {});
    });
    for (const cluster of this.clusters.current()) this.startWatch(cluster);
  }

  private startWatch(handle: ClusterHandle): void {
    const watch = this.watchRollouts(handle)({
      onEvent: (type, object) => void this.onWatchEvent(handle, type, object),
      onRestarted: () => this.event('resync', {}),
    });
    this.watches.set(handle.name, { handle, watch });
    watch.catch((err: unknown) =>
      this.logger.warn({ err, cluster: handle.name }, 'dashboard: rollout watch failed'),
    );
  }

  /** Stops one cluster's watch, or, without a name, every watch and the heartbeat (the last page left). */
  private stopWatch(cluster?: string): void {
    const names = cluster === undefined ? [...this.watches.keys()] : [cluster];
    for (const name of names) {
      const running = this.watches.get(name);
      this.watches.delete(name);
      void running?.watch.then((w) => w.stop()).catch(() => undefined);
    }
    if (cluster !== undefined) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private async onWatchEvent(handle: ClusterHandle, type: string, object: unknown): Promise<void> {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    // An event of a watch since stopped (its cluster removed or changed) is not this cluster's any more.
    if (this.watches.get(handle.name)?.handle !== handle) return;
    const rollout = parseRollout(object);
    if (rollout === undefined) return;
    const cluster = handle.name;
    const namespace = rollout.metadata.namespace ?? 'default';
    // One watch per cluster and group: a name may be a Rollout in each, and each keeps its own latest event.
    const key = `${cluster} ${rollout.apiVersion} ${namespace}/${rollout.metadata.name}`;
    const mine = (this.sequence += 1);
    this.latest.set(key, mine);
    if (type === 'DELETED') {
      this.latest.delete(key);
      const group = drivenApiOfVersion(rollout.apiVersion).group;
      return this.event(
        'deleted',
        { cluster, namespace, name: rollout.metadata.name, group },
        { cluster, namespace, group },
      );
    }
    let replicaSets: Awaited<ReturnType<typeof listReplicaSetImages>> = [];
    try {
      replicaSets = await listReplicaSetImages(handle.kube.clients, namespace);
    } catch (err) {
      // Without the images the row is still worth sending: the page shows the rest live.
      this.logger.debug({ err }, 'dashboard: could not read ReplicaSets for an event');
    }
    if (this.latest.get(key) !== mine) return;
    const summary = { ...summarizeRollout(rollout, replicaSets), cluster };
    this.event('rollout', { type, rollout: summary }, { cluster, namespace, group: summary.group });
  }
}
