// The kustomize renderer: an app's inputs materialized from Git objects, built by the real kustomize, output cached by input key.
import { createHash } from 'node:crypto';
import type { AppInputs } from '../app-inputs.ts';
import { RenderError } from '../errors/render-error.ts';
import { RendererUnavailableError } from '../errors/renderer-unavailable-error.ts';
import type { RenderCache } from '../render-cache.ts';
import type { RenderSlots } from '../render-slots.ts';
import type { AppRenderer, RendererIdentity, RenderOutcome } from '../renderer.ts';
import type { RepositoryReader } from '../repository-reader.ts';
import type { KustomizationCache } from './kustomization-cache.ts';
import type { KustomizeBinary } from './kustomize-binary.ts';
import { collectKustomizeInputs } from './kustomize-inputs.ts';
import { runKustomize } from './kustomize-process.ts';
import type { KustomizeRunLimits } from './kustomize-process.ts';
import { materializeInputs, removeMaterialized } from './materialized-inputs.ts';
import { rolloutReferencesConfiguration } from './rollout-references.ts';

/** What a kustomize renderer is built from: found once at start, shared by every source of a process. */
export interface KustomizeRendererOptions {
  /** Undefined when no kustomize was found: every app is then a problem saying so. */
  binary: KustomizeBinary | undefined;
  limits: KustomizeRunLimits;
  slots: RenderSlots;
  cache: RenderCache;
  kustomizations: KustomizationCache;
  /** Where render folders are made (default: the system's temporary folder). */
  tempDir?: string;
}

export class KustomizeRenderer implements AppRenderer {
  readonly kind = 'kustomize' as const;
  readonly identity: RendererIdentity;
  /** Everything besides the inputs that decides the output: part of every input key. */
  private readonly fingerprint: string;
  /** Renders of one key under way: a second source asking for it waits for the same process. */
  private readonly inFlight = new Map<string, Promise<RenderOutcome>>();

  constructor(private readonly options: KustomizeRendererOptions) {
    const { binary } = options;
    this.identity = {
      renderer:
        binary === undefined ? 'none' : binary.command === 'kubectl' ? 'kubectl kustomize' : 'kustomize',
      version: binary?.version ?? 'none',
    };
    const references = createHash('sha256')
      .update(rolloutReferencesConfiguration())
      .digest('hex')
      .slice(0, 16);
    this.fingerprint = `${this.identity.renderer} ${this.identity.version} rollout-references ${references}`;
  }

  collect(reader: RepositoryReader, rootTree: string, dir: string): Promise<AppInputs | undefined> {
    return collectKustomizeInputs(reader, rootTree, dir, this.options.kustomizations, this.fingerprint);
  }

  async render(reader: RepositoryReader, app: AppInputs): Promise<RenderOutcome> {
    if (app.problems.length > 0) return { ok: false, problems: app.problems, ran: false };
    const cached = this.options.cache.get(app.key);
    if (cached !== undefined) return { ok: true, text: cached, ran: false };
    const running = this.inFlight.get(app.key);
    if (running !== undefined) return { ...(await running), ran: false };
    const work = this.build(reader, app).finally(() => this.inFlight.delete(app.key));
    this.inFlight.set(app.key, work);
    return work;
  }

  private async build(reader: RepositoryReader, app: AppInputs): Promise<RenderOutcome> {
    const { binary, limits, slots, cache, tempDir } = this.options;
    let ran = false;
    try {
      if (binary === undefined)
        throw new RendererUnavailableError(
          'no kustomize to render with: set render.kustomize.binary, or install kustomize or kubectl on PATH',
          app.file,
        );
      const text = await slots.run(async () => {
        ran = true;
        const workDir = await materializeInputs(reader, app.inputs, tempDir);
        try {
          return await runKustomize(binary, workDir, app.dir, app.file, limits);
        } finally {
          await removeMaterialized(workDir);
        }
      });
      cache.set(app.key, text);
      return { ok: true, text, ran };
    } catch (error) {
      if (!(error instanceof RenderError)) throw error;
      return {
        ok: false,
        error,
        ran,
        problems: [
          { file: app.file, line: 1, message: `kustomize build ${app.dir || '.'}: ${error.message}` },
        ],
      };
    }
  }
}
