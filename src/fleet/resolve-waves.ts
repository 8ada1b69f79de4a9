// Waves → clusters: explicit lists, a percent of the clusters no earlier wave took, or the rest. Pure.
import type { FleetWave } from '../manifest/fleet.ts';

/** One wave with the clusters it resolves to, in stable order. */
export interface ResolvedWave {
  name: string;
  clusters: string[];
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The clusters of each wave. `fleetClusters` are the fleet's clusters; an explicit wave keeps its own
 * list (in the order written); a `percent` wave takes that share of the clusters not in any explicit wave
 * nor an earlier wave, rounded up, in order of name (so the same clusters every time); `rest` takes what
 * is left. Clusters no wave takes join the last wave: a fleet never leaves a cluster without a wave.
 */
export function resolveWaves(waves: readonly FleetWave[], fleetClusters: readonly string[]): ResolvedWave[] {
  const explicit = new Set(waves.flatMap((wave) => wave.clusters ?? []));
  let remaining = [...new Set(fleetClusters)].filter((name) => !explicit.has(name)).sort(byName);
  const resolved = waves.map((wave): ResolvedWave => {
    if (wave.clusters !== undefined) return { name: wave.name, clusters: [...wave.clusters] };
    if (wave.percent !== undefined) {
      const count = Math.ceil((remaining.length * wave.percent) / 100);
      const taken = remaining.slice(0, count);
      remaining = remaining.slice(count);
      return { name: wave.name, clusters: taken };
    }
    const taken = remaining;
    remaining = [];
    return { name: wave.name, clusters: taken };
  });
  const last = resolved[resolved.length - 1];
  if (last !== undefined && remaining.length > 0) last.clusters.push(...remaining);
  return resolved;
}
