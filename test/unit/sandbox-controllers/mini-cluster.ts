// A tiny in-memory loop for tests: runs a controller and the kubelet the way the sandbox server wires them.

import type {
  ControllerOptions,
  ControllerPlan,
  KubeObject,
} from '../../../src/sandbox/controllers/index.ts';
import { formatKubeTime, kubeletStatus } from '../../../src/sandbox/controllers/index.ts';

/** Owner plus pods, advanced by repeated controller and kubelet passes at given instants. */
export class MiniCluster {
  pods: KubeObject[] = [];
  private counter = 0;

  constructor(
    public owner: KubeObject,
    private readonly plan: (
      owner: KubeObject,
      pods: KubeObject[],
      now: Date,
      options: ControllerOptions,
    ) => ControllerPlan,
    private readonly options: ControllerOptions,
  ) {}

  /** One round at `now`: kubelet statuses, then the controller; returns the controller's plan. */
  step(now: Date): ControllerPlan {
    this.pods = this.pods.map((pod) => ({ ...pod, status: kubeletStatus(pod, now, this.options).status }));
    const plan = this.plan(this.owner, this.pods, now, this.options);
    this.pods = this.pods.filter((pod) => !plan.delete.includes(pod.metadata.name ?? ''));
    for (const pod of plan.create) {
      this.counter += 1;
      const name = `${pod.metadata.generateName ?? ''}${String(this.counter).padStart(5, '0')}`;
      this.pods.push({
        ...pod,
        metadata: { ...pod.metadata, name, uid: `uid-${name}`, creationTimestamp: formatKubeTime(now) },
      });
    }
    this.owner = { ...this.owner, status: plan.status };
    return plan;
  }

  /** Steps every `stepMs` from `fromMs` to `toMs` (inclusive) after `start`. */
  run(start: number, fromMs: number, toMs: number, stepMs: number): ControllerPlan | undefined {
    let last: ControllerPlan | undefined;
    for (let ms = fromMs; ms <= toMs; ms += stepMs) last = this.step(new Date(start + ms));
    return last;
  }
}
