// What GET /api/v1/promotions reads: Rollouts, the sources' synced commits, each promotion's pull request, its Events.
import type { Clock } from '../../clock/clock.ts';
import type { Forge } from '../../forge/forge.ts';
import type { KubeClients } from '../../kube/client.ts';
import { kubeCall } from '../../kube/errors.ts';
import { ObservedStateReader } from '../../reconciler/observed-state-reader.ts';
import { ROLLGATE_API, type DrivenApi } from '../../manifest/driven-api.ts';
import {
  isPromotionHistoryReason,
  readPromotionHistoryEvent,
  type PromotionHistoryEntry,
} from '../../promoter/promotion-history-event.ts';
import { promotionRolloutOf } from '../../promoter/read-promotion-rollout.ts';
import { planCommitStatus } from '../../promotion/commit-status.ts';
import { promotionBranch } from '../../promotion/plan-promotion.ts';
import { promotability } from '../../promotion/promotable-revision.ts';
import { ConfigMapSourceStateStore } from '../../sync/source-state-store.ts';
import {
  buildPromotionsResponse,
  type PipelinePromotion,
  type PipelineSource,
  type PromotionLook,
  type PromotionsResponse,
  unsettledPullRequests,
} from './promotion-pipeline.ts';
import { listRolloutSummaries } from './rollout-reads.ts';
import type { RolloutSummary } from './rollout-summary.ts';

/** A configured promotion with the forge it talks to. */
export interface ReadablePromotion extends PipelinePromotion {
  forge: Forge;
}

export interface PromotionsReaderOptions {
  clients: KubeClients;
  /** The sources now (configured and GitSource objects: read at each request), or a fixed list. */
  sources: readonly PipelineSource[] | (() => readonly PipelineSource[]);
  promotions: readonly ReadablePromotion[];
  /** `kubernetes.stateNamespace`: where the sources' state ConfigMaps are (`rollgate-source-<name>`). */
  stateNamespace: string;
  /** `kubernetes.watchNamespace` (empty: every namespace). */
  namespace?: string;
  /** The group the promotions' Rollouts live in: where the sync applies them (default rollgate.dev). */
  api?: DrivenApi;
  clock: Clock;
}

/** Reads the promotions view; undefined when Rollgate runs without a configuration (`rollgate dashboard`). */
export type ReadPromotions = () => Promise<PromotionsResponse>;

/**
 * How long one read of the forge is reused: each open page reads the view when it changes, and several
 * tabs must not multiply the forge requests (its rate limit is shared with the promoter).
 */
const REUSE_MS = 5_000;

function failure(err: unknown): { code: string; message: string } {
  const code = (err as { code?: unknown }).code;
  return {
    code: typeof code === 'string' ? code : 'dashboard.read_failed',
    message: err instanceof Error ? err.message : String(err),
  };
}

async function lookAt(
  options: PromotionsReaderOptions,
  promotion: ReadablePromotion,
  summary: RolloutSummary,
): Promise<PromotionLook | undefined> {
  const key = { namespace: summary.namespace, name: summary.name };
  const read = await new ObservedStateReader(options.clients, undefined, options.api).read(key);
  if (read === undefined) return undefined;
  const { rollout } = promotionRolloutOf(read);
  const verdict = promotability(rollout);
  const look: PromotionLook = {
    rollout: `${key.namespace}/${key.name}`,
    promotable: verdict.promotable,
    reason: verdict.promotable ? `revision ${verdict.hash} finished a healthy canary` : verdict.reason,
  };
  if (verdict.hash !== undefined) look.revision = verdict.hash;
  const status = planCommitStatus(promotion.from, rollout);
  if (status !== undefined) look.commitStatus = status;
  const base = sourcesOf(options).find((s) => s.name === promotion.to)?.branch ?? 'main';
  try {
    const pull = await promotion.forge.findOpenPullRequest(promotionBranch(promotion.name, key.name), base);
    if (pull !== undefined) {
      look.pullRequest = { number: pull.number, url: pull.url, title: pull.title, headSha: pull.headSha };
      look.pullRequest.checks = await promotion.forge.checksState(pull.headSha);
    }
  } catch (err) {
    look.error = failure(err);
  }
  return look;
}

async function readHistory(
  clients: KubeClients,
  namespaces: readonly string[],
): Promise<PromotionHistoryEntry[]> {
  const entries: PromotionHistoryEntry[] = [];
  for (const namespace of namespaces) {
    const list = await kubeCall({ verb: 'list', kind: 'Event', namespace }, () =>
      clients.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.kind=Rollout' }),
    );
    for (const event of list.items) {
      if (event.involvedObject.kind !== 'Rollout' || !isPromotionHistoryReason(event.reason)) continue;
      const when = event.lastTimestamp ?? event.eventTime;
      const entry = readPromotionHistoryEvent({
        ...(event.reason !== undefined ? { reason: event.reason } : {}),
        ...(event.message !== undefined ? { message: event.message } : {}),
        rollout: `${namespace}/${event.involvedObject.name ?? ''}`,
        ...(when !== undefined ? { at: new Date(when).toISOString() } : {}),
      });
      if (entry !== undefined) entries.push(entry);
    }
  }
  return entries;
}

/** The sources as they are now. */
function sourcesOf(options: Pick<PromotionsReaderOptions, 'sources'>): readonly PipelineSource[] {
  return typeof options.sources === 'function' ? options.sources() : options.sources;
}

/** The reader the dashboard serves /api/v1/promotions with; reads are reused for a few seconds. */
export function promotionsReader(options: PromotionsReaderOptions): ReadPromotions {
  const store = new ConfigMapSourceStateStore(options.clients, options.stateNamespace);
  let last: { at: number; result: Promise<PromotionsResponse> } | undefined;
  const readAll = async (): Promise<PromotionsResponse> => {
    const summaries = await listRolloutSummaries(options.clients, options.namespace ?? '', [
      options.api ?? ROLLGATE_API,
    ]);
    // One list of every source's state, not a read per source.
    const all = await store.readAll();
    const states = sourcesOf(options).map((s) => [s.name, all.get(s.name) ?? {}] as const);
    const looks: Record<string, PromotionLook[]> = {};
    const sourceNamespaces = new Set<string>();
    for (const promotion of options.promotions) {
      const carried = summaries.filter(
        (r) =>
          r.source === promotion.from &&
          (promotion.rollouts === undefined || promotion.rollouts.includes(r.name)),
      );
      for (const r of carried) sourceNamespaces.add(r.namespace);
      const found = await Promise.all(carried.map((r) => lookAt(options, promotion, r)));
      looks[promotion.name] = found.filter((l): l is PromotionLook => l !== undefined);
    }
    const recorded = await readHistory(options.clients, [...sourceNamespaces].sort());
    const open = Object.entries(looks).flatMap(([promotion, found]) =>
      found.flatMap((l) => (l.pullRequest ? [{ promotion, number: l.pullRequest.number }] : [])),
    );
    const settled = await Promise.all(
      unsettledPullRequests(recorded, open).map(async (pull) => {
        const forge = options.promotions.find((p) => p.name === pull.promotion)?.forge;
        const now = await forge?.getPullRequest(pull.number).catch(() => undefined);
        if (now === undefined || now.state === 'open') return [];
        return [
          {
            promotion: pull.promotion,
            rollout: pull.rollout,
            event: now.state,
            pullRequest: { number: pull.number, url: now.url },
          } satisfies PromotionHistoryEntry,
        ];
      }),
    );
    return buildPromotionsResponse({
      sources: sourcesOf(options),
      promotions: options.promotions.map(({ forge: _forge, ...p }) => p),
      summaries,
      sourceStates: Object.fromEntries(states),
      looks,
      history: [...recorded, ...settled.flat()],
    });
  };
  return () => {
    const now = options.clock.now().getTime();
    if (last === undefined || now - last.at >= REUSE_MS) {
      const result = readAll();
      last = { at: now, result };
      // A failed read is not reused: the next request tries again.
      result.catch(() => {
        if (last?.result === result) last = undefined;
      });
    }
    return last.result;
  };
}
