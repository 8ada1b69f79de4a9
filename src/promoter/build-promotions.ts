// From the configuration to ready promotions: forge clients, target sources and the image editor.
import { resolveSourceAuth } from '../config/source-auth.ts';
import type { PromotionConfig, RollgateConfig, SourceConfig } from '../config/schema.ts';
import { createForge } from '../forge/create-forge.ts';
import { configuredCredential } from '../forge/configured-credential.ts';
import type { Forge } from '../forge/forge.ts';
import type { ForgeCredential } from '../forge/forge-credential.ts';
import { pushPromotionCommit } from '../git/promotion-branch.ts';
import { GitSource, type GitSourceOptions } from '../git/source.ts';
import type { Logger } from '../log/logger.ts';
import { parseDuration } from '../manifest/duration.ts';
import { planImageEdits } from '../promotion/plan-image-edits.ts';
import type { PromotionGates } from '../promotion/promotion-gates.ts';
import { Rendering } from '../render/rendering.ts';
import type { ImageEditor, PromotionSource, PromotionSpec, PromotionTarget } from './run-promotion.ts';
import type { FilesReader } from './target-edits.ts';

/** A configured promotion with what running it needs (not the cluster: the caller has that). */
export interface BuiltPromotion {
  spec: PromotionSpec;
  forge: Forge;
  target: PromotionTarget;
  /** The `from` source's Git: what a promoted revision must be. */
  source: PromotionSource;
  editImages: ImageEditor;
}

function sourceNamed(config: RollgateConfig, name: string): SourceConfig {
  const source = config.sources.find((candidate) => candidate.name === name);
  // The schema refuses a promotion naming an unknown source; this only guards a config built by hand.
  if (source === undefined) throw new Error(`no source named "${name}"`);
  return source;
}

/** A source's Git, read through a cache of the promotion's own (`name`). */
function sourceGit(
  name: string,
  source: SourceConfig,
  env: Record<string, string | undefined>,
  options: GitSourceOptions,
): GitSource {
  const auth = resolveSourceAuth(source, env);
  return new GitSource(
    {
      name,
      url: source.url,
      branch: source.branch,
      path: source.path,
      render: source.render,
      ...(auth ? { auth } : {}),
    },
    options,
  );
}

/** Reads a source's branch tip and manifest files, and any files at a tip it read (a promotion's `files`). */
function sourceReader(git: GitSource): {
  read(): Promise<{ tip: string; files: Array<{ path: string; text: string }> }>;
  readFiles: FilesReader;
} {
  return {
    async read() {
      const tip = await git.fetch();
      return { tip, files: await git.readManifestFiles(tip) };
    },
    readFiles: (commit, paths) => git.readFilesUnder(commit, paths),
  };
}

/**
 * The `from` side's reader: its files, and for a source that renders (`render` not `plain`) its objects
 * as the sync reads them, kustomize apps rendered, since a Rollout of an overlay is in none of the path's
 * files. Its Git is built at the first read, with the rendering (kustomize is found then, not at start).
 */
function fromSourceReader(
  name: string,
  source: SourceConfig,
  env: Record<string, string | undefined>,
  options: GitSourceOptions,
  rendering: () => Promise<Rendering>,
): Pick<PromotionSource, 'read' | 'readFiles'> {
  if (source.render === 'plain') return sourceReader(sourceGit(name, source, env, options));
  let git: Promise<GitSource> | undefined;
  const built = (): Promise<GitSource> =>
    (git ??= rendering().then((shared) => sourceGit(name, source, env, { ...options, rendering: shared })));
  return {
    readFiles: async (commit, paths) => (await built()).readFilesUnder(commit, paths),
    async read() {
      const reader = await built();
      const tip = await reader.fetch();
      const files = await reader.readManifestFiles(tip);
      // Every object at the tip, as a first sync would read it; an app that fails to render has none.
      const objects = (await reader.diff(undefined, tip)).flatMap((change) =>
        change.change === 'removed' ? [] : [change.object],
      );
      return { tip, files, objects };
    },
  };
}

/** The configured gates with durations in milliseconds (validated by the schema). */
function promotionGatesOf(gates: NonNullable<PromotionConfig['gates']>): PromotionGates {
  return {
    ...(gates.soak !== undefined ? { soakMs: parseDuration(gates.soak) } : {}),
    windows: gates.windows.map((window) => ({
      kind: window.kind,
      schedule: window.schedule,
      durationMs: parseDuration(window.duration),
      ...(window.timeZone !== undefined ? { timeZone: window.timeZone } : {}),
    })),
    ...(gates.requireApproval !== undefined ? { requireApproval: gates.requireApproval } : {}),
  };
}

/** The promotion's forge credential: a token, a rotated token file, or a GitHub App (checked now). */
function forgeCredential(
  promotion: PromotionConfig,
  env: Record<string, string | undefined>,
): ForgeCredential {
  return configuredCredential(`promotions.${promotion.name}.pullRequest`, promotion.pullRequest, env);
}

/**
 * Builds every configured promotion: secrets are resolved now (a missing token fails the start, naming
 * the key), so nothing is read lazily later. The target side reads with the `to` source's cache and
 * pushes with its credentials.
 */
export function buildPromotions(
  config: RollgateConfig,
  options: {
    logger: Logger;
    env?: Record<string, string | undefined>;
    cacheDir?: string;
    /**
     * The process's rendering ({@link Rendering.once}), for the render check of a promotion into a
     * kustomize target and the read of a rendering `from` source: a process passes the one its poller uses. By default one is started (kustomize
     * found) at the first check and shared by every promotion built here.
     */
    rendering?: () => Promise<Rendering>;
  },
): BuiltPromotion[] {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? config.git.cacheDir;
  const rendering = options.rendering ?? Rendering.once(config.render, options.logger);
  return config.promotions.map((promotion) => {
    const to = sourceNamed(config, promotion.to.source);
    const from = sourceNamed(config, promotion.from.source);
    const auth = resolveSourceAuth(to, env);
    const readers = {
      cacheDir,
      logger: options.logger,
      objectLimits: { maxObjectBytes: config.git.maxObjectBytes, maxPackBytes: config.git.maxPackBytes },
    };
    // The `from` side is read through its own cache (a dot: promotion names are DNS labels, so no other
    // reader has this name): the poller's cache belongs to the poller, maybe in
    // another process, and two writers of one cache would race.
    const source: PromotionSource = {
      ...fromSourceReader(`promotion-${promotion.name}.from`, from, env, readers, rendering),
      ...(from.namespace !== undefined ? { namespace: from.namespace } : {}),
    };
    const targetGit = sourceGit(`promotion-${promotion.name}`, to, env, readers);
    const target: PromotionTarget = {
      branch: to.branch,
      root: to.path,
      ...sourceReader(targetGit),
      // A target of plain YAML has nothing to render: no check, and kustomize is never looked for.
      ...(to.render !== 'plain' && {
        async checkRender(tip, files) {
          const renders = await targetGit.renderEdits(tip, files, await rendering());
          return renders.flatMap((render) => (render.outcome.ok ? [] : render.outcome.problems));
        },
      }),
      async push(request) {
        const result = await pushPromotionCommit({
          source: to.name,
          url: to.url,
          ...(auth ? { auth } : {}),
          baseBranch: to.branch,
          branch: request.branch,
          files: request.files,
          ...(request.deletions !== undefined ? { deletions: request.deletions } : {}),
          message: request.message,
          author: request.author,
          cacheDir,
          logger: options.logger,
        });
        return { commit: result.commit, pushed: result.pushed };
      },
    };
    const pr = promotion.pullRequest;
    return {
      spec: {
        name: promotion.name,
        fromSource: promotion.from.source,
        ...(promotion.from.rollouts !== undefined ? { rollouts: promotion.from.rollouts } : {}),
        toSource: promotion.to.source,
        autoMerge: pr.autoMerge,
        checksIntervalMs: parseDuration(pr.checksInterval),
        labels: pr.labels,
        reviewers: pr.reviewers,
        draft: pr.draft,
        author: pr.author,
        ...(promotion.gates !== undefined ? { gates: promotionGatesOf(promotion.gates) } : {}),
        ...(promotion.files.length > 0
          ? {
              files: promotion.files.map((file, i) => ({
                from: file.from,
                to: file.to,
                key: `promotions.${promotion.name}.files[${i}]`,
              })),
            }
          : {}),
        ...(promotion.from.together ? { together: true } : {}),
      },
      forge: createForge({
        provider: pr.provider,
        apiUrl: pr.apiUrl,
        repository: pr.repository,
        token: forgeCredential(promotion, env),
      }),
      target,
      source,
      editImages: (files, workload, images) =>
        planImageEdits(files, workload, images, { path: to.path }).files.map((file) => ({
          path: file.path,
          text: file.text,
        })),
    };
  });
}
