// Turns a verified push into coalesced polls of every source on that repository and branch.
import { silentLogger, type Logger } from '../log/logger.ts';
import type { PollQueue } from '../queue/poll-queue.ts';
import { redactUrl } from '../git/remote-url.ts';
import { repoUrlKey } from './repo-url.ts';
import type { OnPush, PushHandled, PushNotice } from './webhook-types.ts';

/** What the router needs to know about a source. */
export interface WatchedSource {
  name: string;
  url: string;
  branch: string;
}

export interface PushRouterOptions {
  /** The sources now (configured and GitSource objects), read at each push; or a fixed list. */
  sources: readonly WatchedSource[] | (() => readonly WatchedSource[]);
  pollQueue: Pick<PollQueue, 'enqueuePoll'>;
  logger?: Logger;
}

/** The sources a push concerns: same repository (see repoUrlKey) and same branch. */
export function sourcesForPush(
  notice: Pick<PushNotice, 'repositoryUrls' | 'branch'>,
  sources: readonly WatchedSource[],
): WatchedSource[] {
  const keys = new Set(notice.repositoryUrls.map(repoUrlKey).filter((k): k is string => k !== undefined));
  return sources.filter((s) => s.branch === notice.branch && keys.has(repoUrlKey(s.url) ?? ''));
}

/**
 * Builds the server's onPush: enqueues a `webhook` poll of each matching source (coalesced per
 * source by the poll queue); a push to an untracked repository or branch enqueues nothing.
 */
export function createPushRouter(options: PushRouterOptions): OnPush {
  const logger = options.logger ?? silentLogger;
  return async (notice): Promise<PushHandled> => {
    const sources = typeof options.sources === 'function' ? options.sources() : options.sources;
    // A GitSource's own receiver polls that source only (its secret speaks for nothing else).
    const candidates = notice.only === undefined ? sources : sources.filter((s) => s.name === notice.only);
    const matched = sourcesForPush(notice, candidates);
    for (const source of matched) await options.pollQueue.enqueuePoll(source.name, 'webhook');
    logger.info(
      {
        provider: notice.provider,
        deliveryId: notice.deliveryId,
        branch: notice.branch,
        repository: notice.repositoryUrls.map(redactUrl)[0],
        sources: matched.map((s) => s.name),
        ...(notice.only !== undefined ? { receiver: notice.only } : {}),
      },
      matched.length > 0 ? 'push: polls enqueued' : 'push: no source tracks this repository and branch',
    );
    return { sourcesQueued: matched.map((s) => s.name) };
  };
}
