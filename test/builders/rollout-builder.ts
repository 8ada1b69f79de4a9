// Test builder for Rollout objects: aRollout().withSteps(...).atStep(2).build().
import type {
  BlueGreenStrategy,
  CanaryStep,
  CanaryStrategy,
  Rollout,
  RolloutStatus,
} from '../../src/manifest/rollout.ts';
import { podTemplateHash } from '../../src/rollout/index.ts';

/** The pod template the builders use for an image. */
export function templateFor(image: string): Rollout['spec']['template'] {
  return { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image }] } };
}

/** The pod-template hash of {@link templateFor}(image). */
export function hashOf(image: string): string {
  return podTemplateHash(templateFor(image));
}

export class RolloutBuilder {
  private rollout: Rollout;

  constructor(name = 'web') {
    this.rollout = {
      apiVersion: 'rollgate.dev/v1alpha1',
      kind: 'Rollout',
      metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: templateFor('app:1'),
        strategy: { canary: { steps: [] } },
      },
    };
  }

  withReplicas(replicas: number): this {
    this.rollout.spec.replicas = replicas;
    return this;
  }

  withImage(image: string): this {
    this.rollout.spec.template = templateFor(image);
    return this;
  }

  withSteps(...steps: CanaryStep[]): this {
    this.canary().steps = steps;
    return this;
  }

  withCanary(fields: Partial<CanaryStrategy>): this {
    Object.assign(this.canary(), fields);
    return this;
  }

  /** A blue-green strategy in place of the canary: active Service `web`, preview `web-preview`, then `fields`. */
  withBlueGreen(fields: Partial<BlueGreenStrategy> = {}): this {
    this.rollout.spec.strategy = {
      blueGreen: { activeService: 'web', previewService: 'web-preview', ...fields },
    };
    return this;
  }

  /** spec.paused. */
  withPaused(paused = true): this {
    this.rollout.spec.paused = paused;
    return this;
  }

  withProgressDeadline(seconds: number, abort = false): this {
    this.rollout.spec.progressDeadlineSeconds = seconds;
    this.rollout.spec.progressDeadlineAbort = abort;
    return this;
  }

  /** Status as the planner left it: stable `stableImage`, canary = current image at step `index`. */
  atStep(index: number, stableImage = 'app:1'): this {
    this.withStatus({
      stableRS: hashOf(stableImage),
      currentPodHash: podTemplateHash(this.rollout.spec.template),
      currentStepIndex: index,
    });
    return this;
  }

  /** Status of a completed rollout at the current image. */
  stableAtCurrent(): this {
    const hash = podTemplateHash(this.rollout.spec.template);
    this.withStatus({
      stableRS: hash,
      currentPodHash: hash,
      currentStepIndex: this.canary().steps?.length ?? 0,
    });
    return this;
  }

  withAnnotations(annotations: Record<string, string>): this {
    this.rollout.metadata.annotations = { ...(this.rollout.metadata.annotations ?? {}), ...annotations };
    return this;
  }

  withStatus(status: Partial<RolloutStatus> & Record<string, unknown>): this {
    this.rollout.status = { ...(this.rollout.status ?? {}), ...status };
    return this;
  }

  build(): Rollout {
    return structuredClone(this.rollout);
  }

  private canary(): CanaryStrategy {
    this.rollout.spec.strategy.canary ??= {};
    return this.rollout.spec.strategy.canary;
  }
}

export function aRollout(name?: string): RolloutBuilder {
  return new RolloutBuilder(name);
}
