// The sources that write an abort back to Git (`sources[].onAbort.revert`), with what a revert look needs of Git and the forge.
import { join } from 'node:path';
import { resolveSourceAuth } from '../config/source-auth.ts';
import type { RollgateConfig, SourceConfig } from '../config/schema.ts';
import { configuredCredential } from '../forge/configured-credential.ts';
import { createForge } from '../forge/create-forge.ts';
import type { Forge } from '../forge/forge.ts';
import { readCommitChanges } from '../git/commit-changes.ts';
import { pushPromotionCommit } from '../git/promotion-branch.ts';
import { DEFAULT_FETCH_DEPTH, GitSource } from '../git/source.ts';
import type { Logger } from '../log/logger.ts';
import type { RevertPlanInput } from '../revert/plan-revert.ts';
import type { RevertDeps } from './run-revert.ts';

/** One source's revert: its identity for the planner and the Git and forge ports (the cluster's are the caller's). */
export interface BuiltRevert {
  source: RevertPlanInput['source'];
  forge: Forge;
  git: Pick<RevertDeps, 'baseBranch' | 'readCommit' | 'readTip' | 'push' | 'labels' | 'reviewers'>;
}

/** The cache directory name GitSource gives a source (the sync's own cache is read for a commit's parent). */
function cacheOf(cacheDir: string, name: string): string {
  return join(cacheDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.git`);
}

function builtRevert(
  config: RollgateConfig,
  source: SourceConfig,
  options: { logger: Logger; env: Record<string, string | undefined>; cacheDir: string },
): BuiltRevert {
  const pr = source.onAbort?.revert.pullRequest;
  const setting = pr ?? source.commitStatus;
  // The schema refuses an onAbort without either; checked again so a type says so.
  if (setting === undefined) throw new Error(`sources.${source.name}.onAbort.revert has no forge`);
  const what =
    pr !== undefined
      ? `sources.${source.name}.onAbort.revert.pullRequest`
      : `sources.${source.name}.commitStatus`;
  const auth = resolveSourceAuth(source, options.env);
  // The tip is read through a cache of the revert's own, so it never races the sync's fetches.
  const tipGit = new GitSource(
    {
      name: `revert-${source.name}`,
      url: source.url,
      branch: source.branch,
      path: source.path,
      render: 'plain',
      ...(auth ? { auth } : {}),
    },
    {
      cacheDir: options.cacheDir,
      logger: options.logger,
      objectLimits: { maxObjectBytes: config.git.maxObjectBytes, maxPackBytes: config.git.maxPackBytes },
    },
  );
  const author = pr?.author ?? { name: 'Rollgate', email: 'rollgate@users.noreply.invalid' };
  return {
    source: {
      name: source.name,
      path: source.path,
      ...(source.namespace !== undefined ? { namespace: source.namespace } : {}),
    },
    forge: createForge({
      provider: setting.provider,
      apiUrl: setting.apiUrl,
      repository: setting.repository,
      token: configuredCredential(what, setting, options.env),
    }),
    git: {
      baseBranch: source.branch,
      // The sync's cache holds the commit it applied and, since it fetched with history after its first
      // fetch, the parent it synced before; read only (a fetch there is the sync's).
      // After a restart with an empty cache it is not: the revert's own cache then fetches history.
      async readCommit(sha) {
        try {
          return await readCommitChanges(cacheOf(options.cacheDir, source.name), sha);
        } catch {
          // The first fetch sets the cache up (tip alone); the second brings the history under it.
          await tipGit.fetch();
          await tipGit.fetchHistory(DEFAULT_FETCH_DEPTH);
          return readCommitChanges(tipGit.gitdir, sha);
        }
      },
      async readTip() {
        const sha = await tipGit.fetch();
        return { sha, files: await tipGit.readManifestFiles(sha) };
      },
      async push({ branch, files, message }) {
        await pushPromotionCommit({
          source: source.name,
          url: source.url,
          ...(auth ? { auth } : {}),
          baseBranch: source.branch,
          branch,
          files: files.flatMap((file) => (file.text === null ? [] : [{ path: file.path, text: file.text }])),
          // A true revert of a commit that added a file removes it.
          deletions: files.flatMap((file) => (file.text === null ? [file.path] : [])),
          message,
          author,
          cacheDir: options.cacheDir,
          logger: options.logger,
        });
      },
      ...(pr !== undefined ? { labels: pr.labels, reviewers: pr.reviewers } : {}),
    },
  };
}

/** Every source with `onAbort.revert`, credentials checked now (a missing token fails the start, naming the key). */
export function buildReverts(
  config: RollgateConfig,
  options: { logger: Logger; env?: Record<string, string | undefined>; cacheDir?: string },
): BuiltRevert[] {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? config.git.cacheDir;
  return config.sources
    .filter((source) => source.onAbort !== undefined)
    .map((source) => builtRevert(config, source, { logger: options.logger, env, cacheDir }));
}
