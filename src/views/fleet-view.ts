// A Fleet as people look at it: its waves in order with their clusters and phases, the current wave, where it stopped.
import { z } from 'zod';

/** One cluster of a wave, as the Fleet's status reports it (absent from status: `Unknown`). */
export interface FleetClusterView {
  name: string;
  phase: string;
  revision?: string;
  step?: number;
  message?: string;
}

export interface FleetWaveView {
  index: number;
  name: string;
  phase: string;
  /** Whether it is `status.currentWave`. */
  current: boolean;
  clusters: FleetClusterView[];
  startedAt?: string;
  healthyAt?: string;
}

/** What GET /api/v1/fleets returns per Fleet. */
export interface FleetView {
  namespace: string;
  name: string;
  phase: string;
  revision?: string;
  stableRevision?: string;
  message?: string;
  currentWave?: number;
  waves: FleetWaveView[];
  /** Set when a canary aborted somewhere: later waves never get the revision. */
  stoppedBy?: { cluster: string; revision?: string; step?: number; reason: string };
  /** Why the object could not be read as a Fleet (its name is still shown, with this). */
  problem?: string;
}

const text = z.string().max(4096);
const waveSpec = z.looseObject({ name: text.optional(), clusters: z.array(text).optional() });
const waveStatus = z.looseObject({
  name: text.optional(),
  clusters: z.array(text).optional(),
  phase: text.optional(),
  startedAt: text.optional(),
  healthyAt: text.optional(),
});
const clusterStatus = z.looseObject({
  name: text,
  wave: z.number().int().optional(),
  revision: text.optional(),
  phase: text.optional(),
  step: z.number().int().optional(),
  message: text.optional(),
});

/**
 * Only the fields the dashboard reads (docs: the Fleet status shape), each checked; anything else in the
 * object is left alone, so a newer Fleet with more fields still shows.
 */
const fleetSchema = z.looseObject({
  metadata: z.looseObject({ name: text, namespace: text.optional() }),
  spec: z.looseObject({ waves: z.array(waveSpec).optional() }).optional(),
  status: z
    .looseObject({
      revision: text.optional(),
      stableRevision: text.optional(),
      phase: text.optional(),
      currentWave: z.number().int().min(0).optional(),
      message: text.optional(),
      waves: z.array(waveStatus).optional(),
      clusters: z.array(clusterStatus).optional(),
      stoppedBy: z
        .looseObject({
          cluster: text,
          revision: text.optional(),
          step: z.number().int().optional(),
          reason: text.optional(),
        })
        .optional(),
    })
    .optional(),
});

/** The view of one Fleet object as read from the API (a parsing boundary: nothing is trusted). */
export function buildFleetView(item: unknown): FleetView {
  const parsed = fleetSchema.safeParse(item);
  if (!parsed.success) {
    const meta = (item as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
    const issue = parsed.error.issues[0];
    return {
      namespace: typeof meta?.namespace === 'string' ? meta.namespace : '?',
      name: typeof meta?.name === 'string' ? meta.name : '?',
      phase: 'Invalid',
      waves: [],
      problem: `not readable as a Fleet: ${issue?.path.map(String).join('.') || '(object)'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  const fleet = parsed.data;
  const status = fleet.status ?? {};
  const clusters = status.clusters ?? [];
  const specWaves = fleet.spec?.waves ?? [];
  // Status names each wave's clusters once they are resolved (a `percent` or `rest` wave has none in spec).
  const count = Math.max(specWaves.length, status.waves?.length ?? 0);
  const waves: FleetWaveView[] = [];
  for (let index = 0; index < count; index++) {
    const recorded = status.waves?.[index];
    const names =
      recorded?.clusters ??
      specWaves[index]?.clusters ??
      clusters.filter((c) => c.wave === index).map((c) => c.name);
    waves.push({
      index,
      name: recorded?.name ?? specWaves[index]?.name ?? `wave ${index + 1}`,
      phase: recorded?.phase ?? 'Pending',
      current: status.currentWave === index,
      clusters: names.map((name) => {
        const known = clusters.find((c) => c.name === name);
        return {
          name,
          phase: known?.phase ?? 'Unknown',
          ...(known?.revision !== undefined && { revision: known.revision }),
          ...(known?.step !== undefined && { step: known.step }),
          ...(known?.message !== undefined && { message: known.message }),
        };
      }),
      ...(recorded?.startedAt !== undefined && { startedAt: recorded.startedAt }),
      ...(recorded?.healthyAt !== undefined && { healthyAt: recorded.healthyAt }),
    });
  }
  const stopped = status.stoppedBy;
  return {
    namespace: fleet.metadata.namespace ?? 'default',
    name: fleet.metadata.name,
    phase: status.phase ?? 'Pending',
    ...(status.revision !== undefined && { revision: status.revision }),
    ...(status.stableRevision !== undefined && { stableRevision: status.stableRevision }),
    ...(status.message !== undefined && { message: status.message }),
    ...(status.currentWave !== undefined && { currentWave: status.currentWave }),
    waves,
    ...(stopped !== undefined && {
      stoppedBy: {
        cluster: stopped.cluster,
        ...(stopped.revision !== undefined && { revision: stopped.revision }),
        ...(stopped.step !== undefined && { step: stopped.step }),
        reason: stopped.reason ?? '',
      },
    }),
  };
}
