// A GitOps engine toward one object, as Flux's kustomize-controller or Argo CD's application controller acts: Git's manifest re-applied on a timer under the engine's own field manager.

/** How the engine writes: Flux (and Argo CD with ServerSideApply=true) by server-side apply with force; Argo CD by default as `kubectl apply` does. */
export type EngineApplyMode = 'server-side' | 'client-side';

export interface GitOpsEngineOptions {
  /** The API server's base URL (the sandbox speaks plain HTTP without a token). */
  serverUrl: string;
  /** The object's path, e.g. `/apis/argoproj.io/v1alpha1/namespaces/default/rollouts/web`. */
  objectPath: string;
  /** The engine's field manager and User-Agent, e.g. `kustomize-controller` or `argocd-controller`. */
  manager: string;
  mode: EngineApplyMode;
  intervalMs: number;
}

/** One answer the engine got that was not a success. */
export interface EngineFailure {
  code: number;
  message: string;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Re-applies {@link desired} every `intervalMs` until stopped. Each apply also sets the annotation
 * `engine.test/apply` to its count, so every apply is a real write that bumps the resourceVersion: the
 * harshest case for writers that carry a resourceVersion (an engine correcting drift writes as often).
 */
export class GitOpsEngine {
  /** The manifest Git holds now; the next apply sends it. */
  desired: Record<string, unknown> | undefined;
  applies = 0;
  readonly failures: EngineFailure[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: GitOpsEngineOptions) {}

  get userAgent(): string {
    return `${this.options.manager}/v0.0.0-test`;
  }

  start(): void {
    this.running = true;
    void this.tick();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    for (const wake of this.waiters) wake();
  }

  /** Resolves once `count` more applies have been answered (successfully or not). */
  afterApplies(count: number): Promise<void> {
    const target = this.applies + count;
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.applies >= target || !this.running) {
          this.waiters.delete(check);
          resolve();
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    if (this.desired !== undefined) {
      try {
        await this.applyOnce(this.desired);
      } catch (err) {
        this.failures.push({ code: 0, message: (err as Error).message });
      }
      this.applies += 1;
      for (const wake of [...this.waiters]) wake();
    }
    if (this.running) this.timer = setTimeout(() => void this.tick(), this.options.intervalMs);
  }

  private async applyOnce(desired: Record<string, unknown>): Promise<void> {
    const metadata = (desired.metadata ?? {}) as { annotations?: Record<string, string> };
    const annotations = { ...metadata.annotations, 'engine.test/apply': String(this.applies) };
    const manifest = { ...desired, metadata: { ...metadata, annotations } };
    const manager = encodeURIComponent(this.options.manager);
    if (this.options.mode === 'server-side') {
      await this.send(
        'PATCH',
        `${this.options.objectPath}?fieldManager=${manager}&force=true`,
        'application/apply-patch+yaml',
        manifest,
      );
      return;
    }
    // Client-side apply: the manifest merged over the live object (fields Git never named, such as
    // spec.paused set by a verb, are left alone), and the manifest recorded as last-applied.
    const withLastApplied = {
      ...manifest,
      metadata: {
        ...manifest.metadata,
        annotations: { ...annotations, [LAST_APPLIED]: JSON.stringify(desired) },
      },
    };
    const live = await fetch(`${this.options.serverUrl}${this.options.objectPath}`, {
      headers: { 'user-agent': this.userAgent },
    });
    if (live.status === 404) {
      const collection = this.options.objectPath.slice(0, this.options.objectPath.lastIndexOf('/'));
      await this.send('POST', `${collection}?fieldManager=${manager}`, 'application/json', withLastApplied);
      return;
    }
    await this.send(
      'PATCH',
      `${this.options.objectPath}?fieldManager=${manager}`,
      'application/merge-patch+json',
      withLastApplied,
    );
  }

  private async send(method: string, path: string, contentType: string, body: unknown): Promise<void> {
    const answer = await fetch(`${this.options.serverUrl}${path}`, {
      method,
      headers: { 'content-type': contentType, 'user-agent': this.userAgent },
      body: JSON.stringify(body),
    });
    if (answer.status >= 300) {
      const text = await answer.text();
      this.failures.push({ code: answer.status, message: text.slice(0, 300) });
    }
  }
}
