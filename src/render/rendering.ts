// A process's rendering: the renderers found at start, their limits and caches, shared by every source it follows.
// The logger's type only: `rollgate plan` and `validate` load this module, and pino is not theirs to load.
import type { Logger } from '../log/logger.ts';
import type { RenderMode } from './app-discovery.ts';
import { MarkerIndex } from './app-discovery.ts';
import type { ChangedApps } from './changed-apps.ts';
import { renderChangedApps } from './changed-apps.ts';
import type { EditedAppRender } from './edited-apps.ts';
import { renderEditedApps } from './edited-apps.ts';
import type { EditedFile } from './edited-tree.ts';
import { KustomizationCache } from './kustomize/kustomization-cache.ts';
import { findKustomize } from './kustomize/kustomize-binary.ts';
import type { KustomizeBinary } from './kustomize/kustomize-binary.ts';
import { KustomizeRenderer } from './kustomize/kustomize-renderer.ts';
import { RenderCache } from './render-cache.ts';
import { RenderSlots } from './render-slots.ts';
import type { RendererIdentity, RendererTable, RenderOutcome } from './renderer.ts';
import type { RepositoryReader } from './repository-reader.ts';

/** The `render` section of the configuration (docs/config.md). */
export interface RenderSettings {
  /** Rendered output kept by input key, in bytes (`render.cacheBytes`). */
  cacheBytes: number;
  kustomize: {
    /** A kustomize (or kubectl) binary; default: `kustomize` on PATH, else `kubectl`. */
    binary?: string | undefined;
    timeoutSeconds: number;
    maxOutputBytes: number;
    concurrency: number;
  };
}

/** The defaults of {@link RenderSettings} (the config schema has the same). */
export const DEFAULT_RENDER_SETTINGS: RenderSettings = {
  cacheBytes: 64 * 1024 * 1024,
  kustomize: { timeoutSeconds: 30, maxOutputBytes: 16 * 1024 * 1024, concurrency: 2 },
};

/**
 * The renderers of a process with their shared caches (kustomizations read, trees' markers, rendered
 * output) and limits (renders at once). Built once at start ({@link Rendering.start}); every Git source
 * of the process renders through it.
 */
export class Rendering {
  readonly renderers: RendererTable;
  readonly markers = new MarkerIndex();
  readonly kustomizations = new KustomizationCache();
  private readonly kustomize: KustomizeRenderer;

  constructor(
    settings: RenderSettings,
    readonly binary: KustomizeBinary | undefined,
    tempDir?: string,
  ) {
    this.kustomize = new KustomizeRenderer({
      binary,
      limits: {
        timeoutMs: settings.kustomize.timeoutSeconds * 1000,
        maxOutputBytes: settings.kustomize.maxOutputBytes,
      },
      slots: new RenderSlots(settings.kustomize.concurrency),
      cache: new RenderCache(settings.cacheBytes),
      kustomizations: this.kustomizations,
      ...(tempDir !== undefined ? { tempDir } : {}),
    });
    // One row per kind that can be rendered; a Helm renderer would be one more row.
    this.renderers = { kustomize: this.kustomize };
  }

  /** Finds the kustomize to use (logged, with its version) and builds the rendering. */
  static async start(settings: RenderSettings, logger: Logger): Promise<Rendering> {
    const binary = await findKustomize(settings.kustomize.binary);
    if (binary === undefined)
      logger.warn(
        { binary: settings.kustomize.binary },
        settings.kustomize.binary
          ? 'render.kustomize.binary is not an executable: kustomize apps will be problems'
          : 'no kustomize or kubectl on PATH: kustomize apps will be problems',
      );
    else
      logger.info(
        { renderer: binary.command, path: binary.path, version: binary.version },
        'kustomize found',
      );
    return new Rendering(settings, binary);
  }

  /**
   * A rendering started at the first call (kustomize found then, logged once) and the same instance at
   * every later call: what a process builds once and hands to each part that renders (the poller's
   * sources, the promoter's render checks), so they share one kustomize lookup and one render cache.
   */
  static once(settings: RenderSettings, logger: Logger): () => Promise<Rendering> {
    let started: Promise<Rendering> | undefined;
    return () => (started ??= Rendering.start(settings, logger));
  }

  /** Which renderer and version kustomize apps are rendered with (shown in a source's status). */
  get identity(): RendererIdentity {
    return this.kustomize.identity;
  }

  /** See {@link renderChangedApps}. */
  changedApps(
    reader: RepositoryReader,
    trees: { before?: string; after: string },
    sourcePath: string,
    mode: RenderMode,
  ): Promise<ChangedApps> {
    return renderChangedApps(reader, trees, sourcePath, mode, this);
  }

  /**
   * Renders the kustomization in `dir` at the tree `rootTree` (what a promotion's render check and
   * `rollgate plan` ask): the same preflight, limits and cache as a sync. Undefined when `dir` holds none.
   */
  async renderApp(
    reader: RepositoryReader,
    rootTree: string,
    dir: string,
  ): Promise<RenderOutcome | undefined> {
    const app = await this.kustomize.collect(reader, rootTree, dir);
    return app === undefined ? undefined : this.kustomize.render(reader, app);
  }

  /** See {@link renderEditedApps}: the apps an edit touches, rendered with it, before it is committed. */
  editedApps(
    reader: RepositoryReader,
    rootTree: string,
    sourcePath: string,
    mode: RenderMode,
    files: readonly EditedFile[],
  ): Promise<EditedAppRender[]> {
    return renderEditedApps(reader, rootTree, sourcePath, mode, files, this);
  }
}
