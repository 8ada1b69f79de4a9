// The reconcilers of every cluster a process serves: started for each cluster of the set, and as clusters
// are registered and dropped at run time; each cluster's apart from every other's.
import type { ClusterEvent, ClusterHandle, ClusterSet } from '../clusters/cluster-set.ts';
import { installCrds, installCrdsWhenAbsent } from '../kube/install-crds.ts';
import type { Logger } from '../log/logger.ts';
import { argoCrds, rollgateCrds } from '../manifest/crds.ts';
import type { DrivenApi } from '../manifest/driven-api.ts';
import type { RunningReconciler } from './start-reconciler.ts';

/** How often a remote cluster's CRD install is tried again while it fails (capped doubling from 1 s). */
const CRD_RETRY_MS = { firstMs: 1_000, capMs: 60_000 };

export interface ClusterReconcilersOptions {
  clusters: ClusterSet;
  apis: readonly DrivenApi[];
  /** Starts one group's reconciler in one cluster (start-reconciler.ts, with the process's options). */
  start: (cluster: ClusterHandle, api: DrivenApi) => Promise<RunningReconciler>;
  /** Install or upgrade our CRDs in each remote cluster (as the process does in the local one). */
  installsCrds: boolean;
  logger: Logger;
}

/**
 * The remote clusters' reconcilers (the local cluster's are started by the process itself, through the
 * start's retries, as they always were). A remote cluster never holds up the start nor the others: its
 * reconcilers start in the background, a failed first list is retried by each watch on its own, and its
 * CRDs are installed with a capped backoff until the cluster answers.
 */
export class ClusterReconcilers {
  private readonly running = new Map<string, Promise<RunningReconciler[]>>();
  /** The reconcilers whose start finished, by cluster (read synchronously: metrics, unfinished jobs). */
  private readonly ready = new Map<string, RunningReconciler[]>();
  private readonly crdTimers = new Map<string, NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly options: ClusterReconcilersOptions) {}

  /** Starts every remote cluster of the set now, and follows the set from now on. */
  start(): void {
    const { clusters } = this.options;
    for (const cluster of clusters.current()) if (cluster.name !== clusters.localName) this.add(cluster);
    this.unsubscribe = clusters.subscribe((event) => this.onEvent(event));
  }

  /** The reconcilers of every remote cluster started so far (those still starting are left out). */
  async all(): Promise<RunningReconciler[]> {
    const settled = await Promise.allSettled(this.running.values());
    return settled.flatMap((s) => (s.status === 'fulfilled' ? s.value : []));
  }

  /** Every remote cluster's reconcilers whose start finished. */
  started(): RunningReconciler[] {
    return [...this.ready.values()].flat();
  }

  /** A cluster's reconcilers, once started; undefined for a cluster not served (or the local one). */
  of(name: string): Promise<RunningReconciler[]> | undefined {
    return this.running.get(name);
  }

  async stop(stopOptions?: { force?: boolean }): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const timer of this.crdTimers.values()) clearTimeout(timer);
    this.crdTimers.clear();
    await Promise.all([...this.running.keys()].map((name) => this.remove(name, stopOptions)));
  }

  private onEvent(event: ClusterEvent): void {
    if (this.stopped || event.cluster.name === this.options.clusters.localName) return;
    const { logger } = this.options;
    if (event.kind === 'added') {
      logger.info(
        { cluster: event.cluster.name, server: event.cluster.server },
        'cluster added: reconciling it',
      );
      this.add(event.cluster);
      return;
    }
    // A changed registration (another server, new credentials) is served through its new connection.
    const name = event.kind === 'changed' ? event.previous.name : event.cluster.name;
    logger.info({ cluster: name, change: event.kind }, `cluster ${event.kind}: its reconcilers stop`);
    void this.remove(name).then(() => {
      if (event.kind === 'changed' && !this.stopped) this.add(event.cluster);
    });
  }

  private add(cluster: ClusterHandle): void {
    if (this.running.has(cluster.name)) return;
    const { apis, start, logger } = this.options;
    const log = logger.child({ cluster: cluster.name });
    if (this.options.installsCrds) this.installCrdsUntilDone(cluster, CRD_RETRY_MS.firstMs);
    const starting = async (): Promise<RunningReconciler[]> => {
      const reconcilers: RunningReconciler[] = [];
      for (const api of apis) reconcilers.push(await start(cluster, api));
      // Not when the cluster was dropped (or changed) while they started: remove() stops them.
      if (this.running.get(cluster.name) === started) this.ready.set(cluster.name, reconcilers);
      return reconcilers;
    };
    const started: Promise<RunningReconciler[]> = starting();
    started.catch((err: unknown) =>
      log.error({ err: (err as Error).message }, 'could not start the reconcilers of a cluster'),
    );
    this.running.set(cluster.name, started);
  }

  private async remove(name: string, stopOptions?: { force?: boolean }): Promise<void> {
    const started = this.running.get(name);
    this.running.delete(name);
    this.ready.delete(name);
    const timer = this.crdTimers.get(name);
    if (timer !== undefined) clearTimeout(timer);
    this.crdTimers.delete(name);
    const reconcilers = await started?.catch(() => []);
    await Promise.all((reconcilers ?? []).map((r) => r.stop(stopOptions)));
  }

  /** The CRDs a synced Rollout needs, in a remote cluster: retried until it answers (never blocks others). */
  private installCrdsUntilDone(cluster: ClusterHandle, delayMs: number): void {
    const log = this.options.logger.child({ cluster: cluster.name });
    const drivesArgo = this.options.apis.some((api) => api.group === 'argoproj.io');
    void (async () => {
      try {
        await installCrds(cluster.kube.clients, rollgateCrds());
        if (drivesArgo) await installCrdsWhenAbsent(cluster.kube.clients, argoCrds());
        this.crdTimers.delete(cluster.name);
        log.info('CRDs checked in the cluster');
      } catch (err) {
        if (this.stopped || !this.running.has(cluster.name)) return;
        const next = Math.min(CRD_RETRY_MS.capMs, delayMs * 2);
        log.warn(
          { err: (err as Error).message, retryInMs: delayMs },
          'could not install the CRDs in the cluster; trying again',
        );
        const timer = setTimeout(() => this.installCrdsUntilDone(cluster, next), delayMs);
        timer.unref();
        this.crdTimers.set(cluster.name, timer);
      }
    })();
  }
}
