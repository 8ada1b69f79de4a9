// What a source's status write tells the outside: notify jobs for the source triggers, and its commit status on the forge.
import type { PromotionConfig, SourceConfig } from '../config/schema.ts';
import { configuredCredential } from '../forge/configured-credential.ts';
import { createForge } from '../forge/create-forge.ts';
import { ForgeError } from '../forge/forge-error.ts';
import { redactUrl } from '../git/remote-url.ts';
import type { Forge } from '../forge/forge.ts';
import type { Logger } from '../log/logger.ts';
import { systemClock, type Clock } from '../clock/clock.ts';
import { detectSourceTransitions, type ObservedSourceStatus } from '../notify/detect-source-transitions.ts';
import { sourceTemplateData } from '../notify/source-template-data.ts';
import { hasSubscriptions } from '../notify/subscriptions.ts';
import type { NotifyQueue } from '../queue/notify-queue.ts';
import { planSourceCommitStatuses } from '../sync/plan-source-commit-status.ts';
import type { SourceStatus } from '../sync/source-status.ts';

/** The first hold after a forge refused a source's credential; each refusal after a hold doubles it, up to an hour. */
const REFUSAL_FIRST_HOLD_MS = 60_000;
const REFUSAL_LONGEST_HOLD_MS = 3_600_000;

/** What reporting on one source needs: where it reads from, who is subscribed, where its commits live. */
export interface ReportedSource {
  name: string;
  url: string;
  branch: string;
  path: string;
  /** The cluster its objects are applied to (absent: the local one); notifications name it. */
  cluster?: string;
  /** Subscribe entries (an annotations map): a config source's `notifications`, a GitSource's annotations. */
  subscriptions?: Readonly<Record<string, string>>;
  /** The forge its commit statuses go to (none: no commit status). */
  forge?: Forge;
  /** The link a commit status carries. */
  targetUrl?: string;
}

/**
 * The forge setting a config source's commit statuses go to: its own `commitStatus`, else the pull-request
 * forge of a promotion into it (its deployed commits are the merges of that forge's pull requests). Not
 * for a source that is some promotion's `from`: the promoter posts `rollgate/<source>` for its Rollouts.
 */
export function commitStatusSettingOf(
  source: SourceConfig,
  promotions: readonly PromotionConfig[] = [],
):
  | { what: string; setting: NonNullable<SourceConfig['commitStatus']> | PromotionConfig['pullRequest'] }
  | undefined {
  if (source.commitStatus !== undefined)
    return { what: `sources.${source.name}.commitStatus`, setting: source.commitStatus };
  if (promotions.some((p) => p.from.source === source.name)) return undefined;
  const into = promotions.find((p) => p.to.source === source.name);
  return into === undefined
    ? undefined
    : { what: `promotions.${into.name}.pullRequest`, setting: into.pullRequest };
}

/**
 * The reporting of a config source: its `notifications`, and a forge client for its commit statuses (see
 * {@link commitStatusSettingOf}) with its credential checked now (a missing token fails the start, naming
 * the key, like a promotion's).
 */
export function reportedConfigSource(
  source: SourceConfig,
  env: Record<string, string | undefined> = process.env,
  promotions: readonly PromotionConfig[] = [],
): ReportedSource {
  const found = commitStatusSettingOf(source, promotions);
  const targetUrl = source.commitStatus?.targetUrl;
  return {
    name: source.name,
    url: source.url,
    branch: source.branch,
    path: source.path,
    ...(source.notifications !== undefined && { subscriptions: source.notifications }),
    ...(found !== undefined && {
      forge: createForge({
        provider: found.setting.provider,
        apiUrl: found.setting.apiUrl,
        repository: found.setting.repository,
        token: configuredCredential(found.what, found.setting, env),
      }),
      ...(targetUrl !== undefined && { targetUrl }),
    }),
  };
}

/**
 * Turns each status write of a source (the state store's observer) into notify jobs for the triggers it
 * fired and, when the source has a forge, the commit status it calls for. Both are started without
 * waiting, so a sync is never slowed or stopped by them: a failed enqueue or a forge error is logged (with
 * the request; never the token) and the sync goes on. Once per failure and once per (commit, state) hold
 * across processes because the store reports each transition to the one writer that made it, and a notify
 * job is added once per key (NotifyQueue).
 */
export class SourceStatusReports {
  private readonly pending = new Set<Promise<void>>();
  /**
   * Sources whose forge refused the token or the repository (401/403/404): their statuses are not posted
   * until the hold ends (1 minute, doubling to an hour), so a revoked token is not asked again at every
   * change of state. The statuses skipped meanwhile are lost; the next change of state posts.
   */
  private readonly refused = new Map<string, { failures: number; holdUntil: number }>();

  constructor(
    private readonly options: {
      /** The source by internal name; undefined for one that is gone (nothing is reported). */
      sourceNamed: (source: string) => ReportedSource | undefined;
      /** Only `add` is used: a producer. */
      notifyQueue: Pick<NotifyQueue, 'add'>;
      logger: Logger;
      /** Where the hold after a refusal reads the time (default the wall clock). */
      clock?: Clock;
    },
  ) {}

  /** The store's observer (see SourceStatusObserver): never throws, never waits. */
  readonly written = (source: string, before: SourceStatus | undefined, after: SourceStatus): void => {
    const reported = this.options.sourceNamed(source);
    if (reported === undefined) return;
    this.notify(reported, before, after);
    this.postCommitStatus(reported, before, after);
  };

  /** Everything started so far has finished (tests, and a stop). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  private notify(
    source: ReportedSource,
    before: ObservedSourceStatus | undefined,
    after: ObservedSourceStatus,
  ): void {
    if (!hasSubscriptions(source.subscriptions)) return;
    const intents = detectSourceTransitions(source.name, before, after);
    if (intents.length === 0) return;
    // Templates show the URL, never the credentials a URL may carry.
    const data = sourceTemplateData({ ...source, url: redactUrl(source.url) }, after);
    const log = this.options.logger;
    for (const intent of intents)
      this.track(
        this.options.notifyQueue
          .add({
            v: 1,
            kind: 'source-event',
            ...(source.cluster !== undefined ? { cluster: source.cluster } : {}),
            key: intent.key,
            trigger: intent.trigger,
            source: source.name,
            data,
          })
          .then((result) =>
            log.debug(
              { source: source.name, trigger: intent.trigger, result },
              'source notification enqueued',
            ),
          )
          .catch((err: unknown) =>
            log.warn(
              { source: source.name, trigger: intent.trigger, err: (err as Error).message },
              'could not enqueue a source notification; it is lost',
            ),
          ),
      );
  }

  private postCommitStatus(
    source: ReportedSource,
    before: SourceStatus | undefined,
    after: SourceStatus,
  ): void {
    const forge = source.forge;
    if (forge === undefined) return;
    const statuses = planSourceCommitStatuses(source.name, before, after, {
      ...(source.targetUrl !== undefined && { targetUrl: source.targetUrl }),
    });
    const log = this.options.logger;
    const now = (this.options.clock ?? systemClock).now().getTime();
    const hold = this.refused.get(source.name);
    if (statuses.length > 0 && hold !== undefined && now < hold.holdUntil) {
      log.debug(
        { source: source.name, until: new Date(hold.holdUntil).toISOString() },
        'commit status not posted: the forge refused this source’s credential; held',
      );
      return;
    }
    for (const status of statuses) {
      const request = {
        source: source.name,
        sha: status.sha,
        context: status.context,
        state: status.state,
        description: status.description,
      };
      this.track(
        forge.setCommitStatus(status).then(
          () => {
            this.refused.delete(source.name);
            log.info(request, 'commit status posted');
          },
          (err: unknown) => {
            const refusal =
              err instanceof ForgeError &&
              (err.code === 'forge.unauthorized' || err.code === 'forge.not_found');
            if (refusal) {
              const failures = (this.refused.get(source.name)?.failures ?? 0) + 1;
              const holdMs = Math.min(REFUSAL_LONGEST_HOLD_MS, REFUSAL_FIRST_HOLD_MS * 2 ** (failures - 1));
              this.refused.set(source.name, { failures, holdUntil: now + holdMs });
            }
            log.warn(
              {
                ...request,
                provider: forge.provider,
                ...(err instanceof ForgeError && { code: err.code, status: err.context.status }),
                err: (err as Error).message,
              },
              'commit status not posted; the sync goes on',
            );
          },
        ),
      );
    }
  }
}
