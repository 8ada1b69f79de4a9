// The simulated Job controller: runs a Job's pods to success or failure, with retries and backoffLimit.

import type { ControllerOptions } from './controller-options.ts';
import type { ControllerPlan } from './controller-plan.ts';
import type { KubeObject } from './kube-object.ts';
import { isPlainObject } from './kube-object.ts';
import { formatKubeTime, parseKubeTime } from './kube-time.ts';
import { isPodActive, isPodReady, podPhase } from './pod-readiness.ts';
import { podFromTemplate } from './replica-set-controller.ts';
import { readConditions, setCondition } from './status-condition.ts';

/** Delay before re-creating a pod after the n-th failure (1-based): 10s, 20s, 40s … capped at 6m. */
export function jobPodFailureBackOffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(10_000 * 2 ** Math.min(failures - 1, 30), 360_000);
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : undefined;
}

function hasTrueCondition(conditions: Array<Record<string, unknown>>, type: string): boolean {
  return conditions.some((condition) => condition.type === type && condition.status === 'True');
}

function podFinishedAt(pod: KubeObject): number | undefined {
  const statuses = pod.status?.containerStatuses;
  const times = (Array.isArray(statuses) ? statuses.filter(isPlainObject) : [])
    .map((status) => {
      const state = isPlainObject(status.state) ? status.state : {};
      const terminated = isPlainObject(state.terminated) ? state.terminated : {};
      return parseKubeTime(terminated.finishedAt);
    })
    .filter((time): time is number => time !== undefined);
  return times.length === 0 ? undefined : Math.max(...times);
}

function newestFirst(a: KubeObject, b: KubeObject): number {
  const createdA = parseKubeTime(a.metadata.creationTimestamp) ?? 0;
  const createdB = parseKubeTime(b.metadata.creationTimestamp) ?? 0;
  return createdB - createdA || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? '');
}

const completionsReached = {
  reason: 'CompletionsReached',
  message: 'Reached expected number of succeeded pods',
};
const backoffLimitExceeded = {
  reason: 'BackoffLimitExceeded',
  message: 'Job has reached the specified backoff limit',
};
const deadlineExceeded = {
  reason: 'DeadlineExceeded',
  message: 'Job was active longer than specified deadline',
};

/**
 * One pass of the Job controller over the pods it owns. Keeps up to spec.parallelism pods running until
 * spec.completions pods succeeded (condition SuccessCriteriaMet, then Complete once no pod is active),
 * re-creates failed pods after the pod-failure back-off until more than spec.backoffLimit failed
 * (FailureTarget then Failed, reason BackoffLimitExceeded), honours spec.activeDeadlineSeconds and
 * spec.suspend. Status: startTime, active, ready, succeeded, failed, completionTime, conditions.
 */
export function planJob(
  job: KubeObject,
  ownedPods: KubeObject[],
  now: Date,
  _options: ControllerOptions,
): ControllerPlan {
  const spec = job.spec ?? {};
  const previous = job.status ?? {};
  const parallelism = count(spec.parallelism) ?? 1;
  const completions = count(spec.completions) ?? (spec.parallelism === undefined ? 1 : undefined);
  const backoffLimit = count(spec.backoffLimit) ?? 6;
  const activeDeadlineSeconds = count(spec.activeDeadlineSeconds);
  const suspended = spec.suspend === true;
  const template = isPlainObject(spec.template) ? spec.template : {};

  const active = ownedPods.filter(isPodActive);
  const succeededPods = ownedPods.filter((pod) => podPhase(pod) === 'Succeeded');
  const failedPods = ownedPods.filter((pod) => podPhase(pod) === 'Failed');
  const succeeded = Math.max(count(previous.succeeded) ?? 0, succeededPods.length);
  const failed = Math.max(count(previous.failed) ?? 0, failedPods.length);
  let conditions = readConditions(previous);
  const startTime =
    typeof previous.startTime === 'string' ? previous.startTime : suspended ? undefined : formatKubeTime(now);
  const startedAt = parseKubeTime(startTime);

  const create: KubeObject[] = [];
  const deleteNames: string[] = [];
  let completionTime = typeof previous.completionTime === 'string' ? previous.completionTime : undefined;
  let nextChangeAt: number | undefined;
  const finished = hasTrueCondition(conditions, 'Complete') || hasTrueCondition(conditions, 'Failed');

  if (!finished) {
    const deadlineAt =
      activeDeadlineSeconds !== undefined && startedAt !== undefined
        ? startedAt + activeDeadlineSeconds * 1000
        : undefined;
    const failure =
      hasTrueCondition(conditions, 'FailureTarget') ||
      failed > backoffLimit ||
      (deadlineAt !== undefined && now.getTime() >= deadlineAt)
        ? ((conditions.find(
            (condition) => condition.type === 'FailureTarget' && condition.status === 'True',
          ) as { reason?: string; message?: string } | undefined) ??
          (failed > backoffLimit ? backoffLimitExceeded : deadlineExceeded))
        : undefined;
    const success =
      failure === undefined &&
      (completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0);
    if (failure !== undefined) {
      const reason = { reason: String(failure.reason), message: String(failure.message) };
      conditions = setCondition(conditions, { type: 'FailureTarget', status: 'True', ...reason }, now, [
        'lastProbeTime',
      ]);
      deleteNames.push(...active.map((pod) => pod.metadata.name ?? ''));
      if (active.length === 0)
        conditions = setCondition(conditions, { type: 'Failed', status: 'True', ...reason }, now, [
          'lastProbeTime',
        ]);
    } else if (success) {
      conditions = setCondition(
        conditions,
        { type: 'SuccessCriteriaMet', status: 'True', ...completionsReached },
        now,
        ['lastProbeTime'],
      );
      deleteNames.push(...active.map((pod) => pod.metadata.name ?? ''));
      if (active.length === 0) {
        conditions = setCondition(
          conditions,
          { type: 'Complete', status: 'True', ...completionsReached },
          now,
          ['lastProbeTime'],
        );
        completionTime ??= formatKubeTime(now);
      }
    } else if (suspended) {
      deleteNames.push(...active.map((pod) => pod.metadata.name ?? ''));
      conditions = setCondition(
        conditions,
        { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' },
        now,
        ['lastProbeTime'],
      );
    } else {
      if (hasTrueCondition(conditions, 'Suspended'))
        conditions = setCondition(
          conditions,
          { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' },
          now,
          ['lastProbeTime'],
        );
      const wantActive =
        completions !== undefined
          ? Math.min(parallelism, Math.max(0, completions - succeeded))
          : succeeded > 0
            ? 0
            : parallelism;
      if (active.length < wantActive) {
        const lastFailureAt = Math.max(
          0,
          ...failedPods.map(
            (pod) => podFinishedAt(pod) ?? parseKubeTime(pod.metadata.creationTimestamp) ?? 0,
          ),
        );
        const retryAt = failed > 0 ? lastFailureAt + jobPodFailureBackOffMs(failed) : 0;
        if (retryAt > now.getTime()) {
          nextChangeAt = retryAt;
        } else {
          const uid = job.metadata.uid ?? '';
          const name = job.metadata.name ?? '';
          const labels = {
            'batch.kubernetes.io/controller-uid': uid,
            'batch.kubernetes.io/job-name': name,
            'controller-uid': uid,
            'job-name': name,
          };
          for (let index = active.length; index < wantActive; index += 1)
            create.push(podFromTemplate(job, template, labels));
        }
      } else if (active.length > wantActive) {
        deleteNames.push(
          ...[...active]
            .sort(newestFirst)
            .slice(0, active.length - wantActive)
            .map((pod) => pod.metadata.name ?? ''),
        );
      }
      if (deadlineAt !== undefined && deadlineAt > now.getTime())
        nextChangeAt = nextChangeAt === undefined ? deadlineAt : Math.min(nextChangeAt, deadlineAt);
    }
  }

  const status: Record<string, unknown> = {};
  if (conditions.length > 0) status.conditions = conditions;
  if (startTime !== undefined) status.startTime = startTime;
  if (completionTime !== undefined) status.completionTime = completionTime;
  if (active.length > 0) status.active = active.length;
  if (succeeded > 0) status.succeeded = succeeded;
  if (failed > 0) status.failed = failed;
  status.ready = active.filter(isPodReady).length;
  status.uncountedTerminatedPods = {};
  const plan: ControllerPlan = { create, delete: deleteNames, status };
  if (nextChangeAt !== undefined) plan.nextChangeAt = new Date(nextChangeAt);
  return plan;
}
