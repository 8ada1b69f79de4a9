// GET /api/v1/promotions' model: the environments as a pipeline, each promotion's open pull request, the history.
import type { PromotionHistoryEntry } from '../../promoter/promotion-history-event.ts';
import type { SourceStatus } from '../../sync/source-status.ts';
import type { RolloutSummary } from './rollout-summary.ts';

/** A configured source, as far as the pipeline needs it. */
export interface PipelineSource {
  name: string;
  branch: string;
  path: string;
  namespace?: string;
}

/** A configured promotion: from one source to another. */
export interface PipelinePromotion {
  name: string;
  from: string;
  to: string;
  /** Rollout names it carries; every Rollout of `from` when absent. */
  rollouts?: string[];
}

/** One environment (a source) and what it runs. */
export interface EnvironmentView {
  source: string;
  branch: string;
  path: string;
  namespace?: string;
  /** The last synced commit and how that sync went (from the source's rollgate-source-<name> ConfigMap). */
  commit?: string;
  syncedAt?: string;
  syncPhase?: SourceStatus['phase'];
  syncMessage?: string;
  /** The Rollouts applied from this source: the list rows, so each runs what the rollout list says. */
  rollouts: RolloutSummary[];
}

/** The open pull request of one promotion for one Rollout. */
export interface PromotionPullRequestView {
  number: number;
  url: string;
  title: string;
  headSha: string;
  /** The combined state of the commit statuses and checks on its head, as auto-merge reads it. */
  checks?: 'pending' | 'success' | 'failure';
}

/** What one look at a promotion for one Rollout of its source found (read only; nothing is acted on). */
export interface PromotionLook {
  /** `namespace/name` of the source Rollout. */
  rollout: string;
  /** The revision (pod-template hash) the source runs, and whether it may be promoted. */
  revision?: string;
  promotable: boolean;
  reason: string;
  /** The status Rollgate posts on the source commit (`rollgate/<source>`). */
  commitStatus?: { sha: string; context: string; state: string; description: string };
  pullRequest?: PromotionPullRequestView;
  /** The forge could not be read for this look. */
  error?: { code: string; message: string };
}

export interface PromotionView extends PipelinePromotion {
  looks: PromotionLook[];
}

/** GET /api/v1/promotions. */
export interface PromotionsResponse {
  /** Sources in pipeline order: every promotion's `from` before its `to`; sources no promotion names last. */
  environments: EnvironmentView[];
  promotions: PromotionView[];
  /**
   * Pull requests opened, merged and closed, newest first, as long as the cluster keeps their Events; a
   * pull request merged or closed on the forge by a person shows that state (without a time).
   */
  history: PromotionHistoryEntry[];
}

/**
 * Orders sources so that each promotion's `from` comes before its `to` (staging → prod …); ties keep the
 * configuration's order. A cycle cannot be configured usefully, but is not looped on: its sources keep
 * the configuration's order.
 */
export function pipelineOrder(
  sources: readonly string[],
  promotions: ReadonlyArray<{ from: string; to: string }>,
): string[] {
  const promoted = new Set(promotions.flatMap((p) => [p.from, p.to]));
  const inPipeline = sources.filter((s) => promoted.has(s));
  const ordered: string[] = [];
  const remaining = new Set(inPipeline);
  while (remaining.size > 0) {
    const next =
      inPipeline.find(
        (s) =>
          remaining.has(s) && !promotions.some((p) => p.to === s && remaining.has(p.from) && p.from !== s),
      ) ?? inPipeline.find((s) => remaining.has(s));
    if (next === undefined) break;
    ordered.push(next);
    remaining.delete(next);
  }
  return [...ordered, ...sources.filter((s) => !promoted.has(s))];
}

/** How many pull requests' current state a read asks the forge for, newest first. */
export const SETTLED_LOOKUPS = 20;

/**
 * The pull requests whose history ends at `opened` and that are not open any more: merged or closed by
 * a person on the forge, which the promoter does not see happen. Their state is asked of the forge.
 */
export function unsettledPullRequests(
  history: readonly PromotionHistoryEntry[],
  open: ReadonlyArray<{ promotion: string; number: number }>,
): Array<{ promotion: string; rollout: string; number: number; url?: string }> {
  const last = new Map<string, PromotionHistoryEntry>();
  for (const entry of [...history].sort((a, b) => (a.at ?? '').localeCompare(b.at ?? ''))) {
    const key = `${entry.promotion}#${entry.pullRequest.number}`;
    // Opened again after a close keeps the later close from being forgotten: the last word counts.
    last.set(key, entry);
  }
  const isOpen = new Set(open.map((o) => `${o.promotion}#${o.number}`));
  return [...last.entries()]
    .filter(([key, entry]) => entry.event === 'opened' && !isOpen.has(key))
    .map(([, entry]) => entry)
    .sort((a, b) => (b.at ?? '').localeCompare(a.at ?? ''))
    .slice(0, SETTLED_LOOKUPS)
    .map((entry) => ({
      promotion: entry.promotion,
      rollout: entry.rollout,
      number: entry.pullRequest.number,
      ...(entry.pullRequest.url !== undefined ? { url: entry.pullRequest.url } : {}),
    }));
}

/** Builds the response (pure) from what was read. */
export function buildPromotionsResponse(input: {
  sources: readonly PipelineSource[];
  promotions: readonly PipelinePromotion[];
  summaries: readonly RolloutSummary[];
  sourceStates: Readonly<Record<string, { commit?: string; status?: SourceStatus }>>;
  looks: Readonly<Record<string, PromotionLook[]>>;
  history: readonly PromotionHistoryEntry[];
}): PromotionsResponse {
  const byName = new Map(input.sources.map((s) => [s.name, s]));
  const order = pipelineOrder(
    input.sources.map((s) => s.name),
    input.promotions,
  );
  const environments = order.map((name): EnvironmentView => {
    const source = byName.get(name) as PipelineSource;
    const state = input.sourceStates[name] ?? {};
    const env: EnvironmentView = {
      source: name,
      branch: source.branch,
      path: source.path,
      rollouts: input.summaries.filter((r) => r.source === name),
    };
    if (source.namespace !== undefined) env.namespace = source.namespace;
    const commit = state.commit ?? state.status?.commit;
    if (commit !== undefined) env.commit = commit;
    if (state.status?.lastSyncedAt !== undefined) env.syncedAt = state.status.lastSyncedAt;
    if (state.status !== undefined) {
      env.syncPhase = state.status.phase;
      env.syncMessage = state.status.message;
    }
    return env;
  });
  // An entry without a time (a merge seen on the forge, not recorded) is newer than any recorded one.
  const history = [...input.history].sort((a, b) => (b.at ?? '\uffff').localeCompare(a.at ?? '\uffff'));
  return {
    environments,
    promotions: input.promotions.map((p) => ({
      ...p,
      looks: [...(input.looks[p.name] ?? [])].sort((a, b) => a.rollout.localeCompare(b.rollout)),
    })),
    history,
  };
}
