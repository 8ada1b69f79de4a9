// What `rollgate promotions` shows: every promotion, per Rollout of its source, as a dry-run look finds it.
import type { KubeClients } from '../kube/client.ts';
import { listRollouts } from '../views/rollout-list.ts';
import { ROLLGATE_API, type DrivenApi } from '../manifest/driven-api.ts';
import type { Logger } from '../log/logger.ts';
import type { PromotionState } from '../promotion/promotion-action.ts';
import type { BuiltPromotion } from './build-promotions.ts';
import { lookAtPromotion } from './look-at-promotion.ts';

/** One promotion of one Rollout. */
export interface PromotionRow {
  promotion: string;
  from: string;
  to: string;
  rollout: string;
  /** The revision (pod-template hash) the source runs. */
  revision: string;
  image: string;
  phase: string;
  state: PromotionState | 'error';
  pullRequest?: { number: number; url: string };
  /** The commit status of the source commit, as Rollgate posts it. */
  commitStatus?: string;
  summary: string;
}

interface ListedRollout {
  metadata?: { name?: string; namespace?: string };
  spec?: { template?: { spec?: { containers?: Array<{ image?: string }> } } };
  status?: { phase?: string; currentPodHash?: string };
}

/**
 * Reads every promotion without acting (no push, no pull request, no status written), over the Rollouts
 * of `namespace` (`kubernetes.watchNamespace`; empty: every namespace) in `api`'s group (where the sync
 * applies them: `syncedRolloutApi(controller.groups)`).
 */
export async function promotionReport(
  promotions: readonly BuiltPromotion[],
  clients: KubeClients,
  logger: Logger,
  namespace = '',
  api: DrivenApi = ROLLGATE_API,
): Promise<PromotionRow[]> {
  const rows: PromotionRow[] = [];
  for (const promotion of promotions) {
    const listed = await listRollouts<ListedRollout>(
      clients,
      namespace,
      `rollgate.dev/source=${promotion.spec.fromSource}`,
      api,
    );
    for (const item of listed) {
      const name = item.metadata?.name ?? '';
      const namespace = item.metadata?.namespace ?? 'default';
      if (promotion.spec.rollouts !== undefined && !promotion.spec.rollouts.includes(name)) continue;
      const base = {
        promotion: promotion.spec.name,
        from: promotion.spec.fromSource,
        to: promotion.spec.toSource,
        rollout: `${namespace}/${name}`,
        revision: item.status?.currentPodHash ?? '',
        image: item.spec?.template?.spec?.containers?.[0]?.image ?? '',
        phase: item.status?.phase ?? '',
      };
      try {
        const outcome = await lookAtPromotion(
          promotion.spec,
          { namespace, name },
          {
            clients,
            api,
            forge: promotion.forge,
            target: promotion.target,
            source: promotion.source,
            editImages: promotion.editImages,
            logger,
          },
          { dryRun: true },
        );
        rows.push({
          ...base,
          state: outcome.plan?.state ?? 'waiting',
          ...(outcome.pullRequest
            ? { pullRequest: { number: outcome.pullRequest.number, url: outcome.pullRequest.url } }
            : {}),
          ...(outcome.commitStatus ? { commitStatus: outcome.commitStatus } : {}),
          summary: outcome.plan?.summary ?? outcome.skipped ?? '',
        });
      } catch (error) {
        rows.push({
          ...base,
          state: 'error',
          summary: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
  return rows;
}

/** The rows as an aligned table. */
export function formatPromotionReport(rows: readonly PromotionRow[]): string {
  if (rows.length === 0) return 'no promotions configured, or no Rollout in their sources\n';
  const table = [
    ['PROMOTION', 'ROLLOUT', 'REVISION', 'IMAGE', 'PHASE', 'STATE', 'PULL REQUEST', 'STATUS'],
    ...rows.map((row) => [
      row.promotion,
      row.rollout,
      row.revision,
      row.image,
      row.phase,
      row.state,
      row.pullRequest ? `#${row.pullRequest.number} ${row.pullRequest.url}` : '-',
      row.commitStatus ?? '-',
    ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  return `${table
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
