// The sync's RolloutHolds read from the Fleets of the local cluster: what each fleet released to one cluster.
import type { KubeClients } from '../kube/client.ts';
import type { HeldSources } from '../queue/held-sources.ts';
import type { RolloutHold, RolloutHolds } from '../sync/held-rollouts.ts';
import { fleetOfRollout, listFleets, type FleetRead } from './fleet-reads.ts';

export interface FleetRolloutHoldsOptions {
  /** Clients of the local cluster, where Fleets live. */
  local: KubeClients;
  /**
   * The control namespace (`kubernetes.stateNamespace`): only its Fleets hold anything. A Fleet elsewhere (a
   * tenant's namespace) would let whoever may write it hold every cluster's Rollout at a path it names.
   */
  namespace: string;
  /** The cluster the sources asking sync into. */
  cluster: string;
  /** Where a held source is noted, so that opening its wave wakes it. */
  heldSources?: HeldSources;
  /** How long a sync reuses the Fleet list (default {@link FLEET_LIST_CACHE_MS}); a wake-up reads afresh. */
  cacheMs?: number;
}

/**
 * A sync of many Rollouts reads the Fleets once, not once per Rollout. A stale list errs on the safe side
 * only for a short while: the poll a release wakes reads afresh.
 */
export const FLEET_LIST_CACHE_MS = 5000;

/**
 * A Rollout is held when a Fleet names its file and this cluster is in a wave after the first whose
 * status releases another revision than the one being synced. A fleet with no status yet holds nothing
 * (its controller's first pass, right after it is created, writes one). The first Rollout of each sync
 * asks with `fresh` (a list cached by an earlier sync may predate the Fleet's first status, and would let
 * the commit through); the sync's other Rollouts share that list, and so does any question asked while a
 * read is under way. The poll a release wakes reads afresh, so it sees the release.
 */
export class FleetRolloutHolds implements RolloutHolds {
  private inFlight: Promise<FleetRead[]> | undefined;
  private cached: { at: number; fleets: FleetRead[] } | undefined;

  constructor(private readonly options: FleetRolloutHoldsOptions) {}

  async holdOf(
    rollout: { file: string; namespace?: string; name: string },
    commit: string,
    source: string,
    fresh = false,
  ): Promise<RolloutHold | undefined> {
    const fleet = fleetOfRollout(await this.fleets(fresh), rollout);
    const entry = fleet?.status?.clusters.find((c) => c.name === this.options.cluster);
    if (fleet === undefined || entry === undefined || entry.wave === 0) return undefined;
    if (entry.released === commit) return undefined;
    const key = `${fleet.namespace}/${fleet.name}`;
    await this.options.heldSources?.note(key, this.options.cluster, source);
    return {
      fleet: key,
      wave: fleet.status?.waves[entry.wave]?.name ?? String(entry.wave),
      revision: entry.released,
    };
  }

  private async fleets(fresh: boolean): Promise<FleetRead[]> {
    const now = Date.now();
    // A read under way is newer than any cached list: a question asked meanwhile waits for it.
    if (this.inFlight !== undefined) return this.inFlight;
    if (
      !fresh &&
      this.cached !== undefined &&
      now - this.cached.at < (this.options.cacheMs ?? FLEET_LIST_CACHE_MS)
    )
      return this.cached.fleets;
    this.inFlight = listFleets(this.options.local, this.options.namespace).finally(() => {
      this.inFlight = undefined;
    });
    const fleets = await this.inFlight;
    this.cached = { at: now, fleets };
    return fleets;
  }
}
