// The simulated kubelet: a pod's status as a real kubelet would report it, computed from creation time and now.

import type { ControllerOptions } from './controller-options.ts';
import { isMissingImage, normalizeImage } from './controller-options.ts';
import type { KubeObject } from './kube-object.ts';
import { isPlainObject } from './kube-object.ts';
import { formatGoDuration, formatKubeTime, parseDurationMs, parseKubeTime } from './kube-time.ts';
import {
  jobDurationAnnotation,
  jobResultAnnotation,
  podBehavior,
  readyAfterAnnotation,
} from './pod-annotations.ts';
import { fnv1a32, stableHex64 } from './stable-hash.ts';

/** What the kubelet reports for a pod, and when that report will next change (undefined: never). */
export interface KubeletResult {
  status: Record<string, unknown>;
  nextChangeAt?: Date;
}

/** A crash-looping container stays Ready this long in each run before it exits. */
export const crashLoopReadyMs = 2000;
/** A failed pull shows ErrImagePull this long before the kubelet reports ImagePullBackOff. */
export const errImagePullShowMs = 2000;
/** A crashed container shows `terminated` this long before the next restart or CrashLoopBackOff. */
export const crashTerminatedShowMs = 1000;
/** Default run time of a Job pod's container. */
export const defaultJobDurationMs = 2000;
const backOffBaseMs = 10_000;
const backOffCapMs = 300_000;
/** The node every sandbox pod runs on. */
export const sandboxNodeName = 'sandbox-node';
const hostIP = '172.18.0.2';

/** Kubelet back-off for the n-th retry (0-based): 10s, 20s, 40s … capped at 5m. */
export function kubeletBackOffMs(retry: number): number {
  return Math.min(backOffBaseMs * 2 ** Math.min(retry, 30), backOffCapMs);
}

interface ContainerSpec {
  name: string;
  image: string;
  raw: Record<string, unknown>;
}

interface ContainerView {
  status: Record<string, unknown>;
  ready: boolean;
  /** Has been started at least once (all containers started → phase Running). */
  everStarted: boolean;
  /** Exited for good (restartPolicy Never / Job pods): its exit code. */
  finalExitCode?: number;
  /** When `ready` last changed (pod creation if never). */
  readyChangedAt: number;
  nextChangeAt?: number;
}

interface PodContext {
  podKey: string;
  podRef: string;
  createdAt: number;
  startDelayMs: number;
  readyDelayMs: number;
  now: number;
}

function containerList(spec: Record<string, unknown> | undefined, field: string): ContainerSpec[] {
  const list = spec?.[field];
  if (!Array.isArray(list)) return [];
  return list.filter(isPlainObject).map((raw) => ({
    name: typeof raw.name === 'string' ? raw.name : '',
    image: typeof raw.image === 'string' ? raw.image : '',
    raw,
  }));
}

function containerId(ctx: PodContext, name: string, run: number): string {
  return `containerd://${stableHex64(`${ctx.podKey}/${name}/${run}`)}`;
}

function imageId(image: string): string {
  const normalized = normalizeImage(image);
  const repo = normalized.replace(/[:@][^/]*$/, '');
  return `${repo}@sha256:${stableHex64(normalized)}`;
}

function earliest(...times: Array<number | undefined>): number | undefined {
  const future = times.filter((time): time is number => time !== undefined);
  return future.length === 0 ? undefined : Math.min(...future);
}

function waiting(reason: string, message?: string): Record<string, unknown> {
  return { waiting: message === undefined ? { reason } : { reason, message } };
}

function baseStatus(container: ContainerSpec, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name: container.name,
    state: {},
    lastState: {},
    ready: false,
    restartCount: 0,
    image: container.image,
    imageID: '',
    started: false,
    ...extra,
  };
}

function creatingView(ctx: PodContext, container: ContainerSpec, changeAt: number): ContainerView {
  return {
    status: baseStatus(container, { state: waiting('ContainerCreating') }),
    ready: false,
    everStarted: false,
    readyChangedAt: ctx.createdAt,
    nextChangeAt: changeAt,
  };
}

/** The image as the kubelet names it in back-off messages: as written, plus `:latest` when untagged. */
function withDefaultTag(image: string): string {
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  return lastSegment.includes(':') || lastSegment.includes('@') ? image : `${image}:latest`;
}

/**
 * Failed pulls retried with back-off. During the back-off the message carries the last pull error,
 * as kubelets from v1.32 on report it (`Back-off pulling image "x": ErrImagePull: <error>`).
 */
function pullFailureView(ctx: PodContext, container: ContainerSpec, missing: boolean): ContainerView {
  const firstAttempt = ctx.createdAt + ctx.startDelayMs;
  if (ctx.now < firstAttempt) return creatingView(ctx, container, firstAttempt);
  let attempt = firstAttempt;
  let retry = 0;
  while (attempt + kubeletBackOffMs(retry) <= ctx.now) {
    attempt += kubeletBackOffMs(retry);
    retry += 1;
  }
  const nextAttempt = attempt + kubeletBackOffMs(retry);
  const showErrUntil = attempt + Math.min(errImagePullShowMs, kubeletBackOffMs(retry));
  const ref = normalizeImage(container.image);
  const cause = missing
    ? `rpc error: code = NotFound desc = failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`
    : `rpc error: code = Unknown desc = failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`;
  const state =
    ctx.now < showErrUntil
      ? waiting('ErrImagePull', cause)
      : waiting(
          'ImagePullBackOff',
          `Back-off pulling image "${withDefaultTag(container.image)}": ErrImagePull: ${cause}`,
        );
  return {
    status: baseStatus(container, { state }),
    ready: false,
    everStarted: false,
    readyChangedAt: ctx.createdAt,
    nextChangeAt: ctx.now < showErrUntil ? showErrUntil : nextAttempt,
  };
}

function configErrorMessage(container: ContainerSpec): string {
  const envFrom = Array.isArray(container.raw.envFrom) ? container.raw.envFrom.filter(isPlainObject) : [];
  for (const source of envFrom) {
    if (isPlainObject(source.configMapRef) && typeof source.configMapRef.name === 'string')
      return `configmap "${source.configMapRef.name}" not found`;
    if (isPlainObject(source.secretRef) && typeof source.secretRef.name === 'string')
      return `secret "${source.secretRef.name}" not found`;
  }
  const env = Array.isArray(container.raw.env) ? container.raw.env.filter(isPlainObject) : [];
  for (const variable of env) {
    const from = variable.valueFrom;
    if (!isPlainObject(from)) continue;
    if (isPlainObject(from.configMapKeyRef) && typeof from.configMapKeyRef.name === 'string')
      return `configmap "${from.configMapKeyRef.name}" not found`;
    if (isPlainObject(from.secretKeyRef) && typeof from.secretKeyRef.name === 'string')
      return `secret "${from.secretKeyRef.name}" not found`;
  }
  return `configmap "${container.name}-config" not found`;
}

function configErrorView(ctx: PodContext, container: ContainerSpec): ContainerView {
  const failAt = ctx.createdAt + ctx.startDelayMs;
  if (ctx.now < failAt) return creatingView(ctx, container, failAt);
  return {
    status: baseStatus(container, {
      state: waiting('CreateContainerConfigError', configErrorMessage(container)),
    }),
    ready: false,
    everStarted: false,
    readyChangedAt: ctx.createdAt,
  };
}

function runningStatus(
  ctx: PodContext,
  container: ContainerSpec,
  startedAt: number,
  ready: boolean,
  run: number,
): Record<string, unknown> {
  return baseStatus(container, {
    state: { running: { startedAt: formatKubeTime(startedAt) } },
    ready,
    restartCount: run,
    image: normalizeImage(container.image),
    imageID: imageId(container.image),
    containerID: containerId(ctx, container.name, run),
    started: true,
  });
}

/** A container that starts and becomes Ready at readyAt (never, when undefined). */
function healthyView(ctx: PodContext, container: ContainerSpec, readyAt: number | undefined): ContainerView {
  const startAt = Math.min(ctx.createdAt + ctx.startDelayMs, readyAt ?? Number.POSITIVE_INFINITY);
  if (ctx.now < startAt) return creatingView(ctx, container, startAt);
  const ready = readyAt !== undefined && ctx.now >= readyAt;
  return {
    status: runningStatus(ctx, container, startAt, ready, 0),
    ready,
    everStarted: true,
    readyChangedAt: ready && readyAt !== undefined ? readyAt : ctx.createdAt,
    nextChangeAt: ready ? undefined : readyAt,
  };
}

function terminatedState(
  ctx: PodContext,
  container: ContainerSpec,
  run: number,
  startedAt: number,
  finishedAt: number,
  exitCode: number,
): Record<string, unknown> {
  return {
    terminated: {
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt: formatKubeTime(startedAt),
      finishedAt: formatKubeTime(finishedAt),
      containerID: containerId(ctx, container.name, run),
    },
  };
}

function crashLoopView(ctx: PodContext, container: ContainerSpec, restartPolicy: string): ContainerView {
  const firstStart = ctx.createdAt + ctx.startDelayMs;
  if (ctx.now < firstStart) return creatingView(ctx, container, firstStart);
  const readyLag = Math.max(0, ctx.readyDelayMs - ctx.startDelayMs);
  const runMs = readyLag + crashLoopReadyMs;
  const gapAfter = (run: number): number =>
    run === 0 ? crashTerminatedShowMs : Math.max(crashTerminatedShowMs, kubeletBackOffMs(run - 1));
  let run = 0;
  let start = firstStart;
  while (restartPolicy !== 'Never' && start + runMs + gapAfter(run) <= ctx.now) {
    start += runMs + gapAfter(run);
    run += 1;
  }
  const crashAt = start + runMs;
  const readyAt = start + readyLag;
  const previous =
    run === 0
      ? {}
      : terminatedState(
          ctx,
          container,
          run - 1,
          start - gapAfter(run - 1) - runMs,
          start - gapAfter(run - 1),
          1,
        );
  const image = normalizeImage(container.image);
  if (ctx.now < crashAt) {
    const ready = ctx.now >= readyAt;
    const status = runningStatus(ctx, container, start, ready, run);
    status.lastState = previous;
    return {
      status,
      ready,
      everStarted: true,
      readyChangedAt: ready ? readyAt : run === 0 ? ctx.createdAt : start - gapAfter(run - 1),
      nextChangeAt: ready ? crashAt : readyAt,
    };
  }
  const crashed = terminatedState(ctx, container, run, start, crashAt, 1);
  const common = {
    ready: false,
    restartCount: run,
    image,
    imageID: imageId(container.image),
    containerID: containerId(ctx, container.name, run),
    started: false,
  };
  if (restartPolicy === 'Never') {
    return {
      status: baseStatus(container, { ...common, state: crashed, lastState: previous }),
      ready: false,
      everStarted: true,
      finalExitCode: 1,
      readyChangedAt: crashAt,
    };
  }
  const showTerminatedUntil = crashAt + crashTerminatedShowMs;
  const restartAt = crashAt + gapAfter(run);
  if (ctx.now < showTerminatedUntil || run === 0) {
    return {
      status: baseStatus(container, { ...common, state: crashed, lastState: previous }),
      ready: false,
      everStarted: true,
      readyChangedAt: crashAt,
      nextChangeAt: run === 0 ? restartAt : showTerminatedUntil,
    };
  }
  const message = `back-off ${formatGoDuration(kubeletBackOffMs(run - 1))} restarting failed container=${container.name} pod=${ctx.podRef}`;
  return {
    status: baseStatus(container, {
      ...common,
      state: waiting('CrashLoopBackOff', message),
      lastState: crashed,
    }),
    ready: false,
    everStarted: true,
    readyChangedAt: crashAt,
    nextChangeAt: restartAt,
  };
}

function jobRunView(
  ctx: PodContext,
  container: ContainerSpec,
  durationMs: number,
  exitCode: number,
): ContainerView {
  const startAt = ctx.createdAt + ctx.startDelayMs;
  if (ctx.now < startAt) return creatingView(ctx, container, startAt);
  const finishAt = startAt + durationMs;
  if (ctx.now < finishAt) {
    return {
      status: runningStatus(ctx, container, startAt, true, 0),
      ready: true,
      everStarted: true,
      readyChangedAt: startAt,
      nextChangeAt: finishAt,
    };
  }
  return {
    status: baseStatus(container, {
      state: terminatedState(ctx, container, 0, startAt, finishAt, exitCode),
      image: normalizeImage(container.image),
      imageID: imageId(container.image),
      containerID: containerId(ctx, container.name, 0),
    }),
    ready: false,
    everStarted: true,
    finalExitCode: exitCode,
    readyChangedAt: finishAt,
  };
}

function isJobPod(pod: KubeObject): boolean {
  const labels = pod.metadata.labels ?? {};
  return (
    (pod.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'Job') ||
    pod.metadata.annotations?.[jobResultAnnotation] !== undefined ||
    labels['job-name'] !== undefined ||
    labels['batch.kubernetes.io/job-name'] !== undefined
  );
}

function qosClass(containers: ContainerSpec[]): string {
  let anySet = false;
  let guaranteed = true;
  for (const container of containers) {
    const resources = isPlainObject(container.raw.resources) ? container.raw.resources : {};
    const requests = isPlainObject(resources.requests) ? resources.requests : {};
    const limits = isPlainObject(resources.limits) ? resources.limits : {};
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) anySet = true;
    for (const resource of ['cpu', 'memory']) {
      const limit = limits[resource];
      const request = requests[resource] ?? limit;
      if (limit === undefined || String(request) !== String(limit)) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function podIP(key: string): string {
  const hash = fnv1a32(key);
  return `10.244.${(hash >>> 8) & 0xff}.${2 + ((hash & 0xff) % 252)}`;
}

function condition(
  type: string,
  status: boolean,
  at: number,
  reason?: string,
  message?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type,
    status: status ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: formatKubeTime(at),
  };
  if (!status && reason !== undefined) out.reason = reason;
  if (!status && message !== undefined) out.message = message;
  return out;
}

/**
 * The status a real kubelet would report for this pod at `now`, derived only from the pod (spec,
 * annotations, creationTimestamp, deletionTimestamp) and `now`, so it is deterministic. The pod's
 * `sandbox.rollgate.dev/behavior` annotation picks the behaviour (see docs/sandbox-pods.md); images
 * matching `options.missingImages` fail to pull as from a registry that lacks them.
 */
export function kubeletStatus(pod: KubeObject, now: Date, options: ControllerOptions): KubeletResult {
  const createdAt = parseKubeTime(pod.metadata.creationTimestamp) ?? now.getTime();
  // deletionTimestamp is when the grace period ends; the kubelet stops the pod from the delete request on.
  const deletionDeadline = parseKubeTime(pod.metadata.deletionTimestamp);
  const graceMs = Math.max(0, pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
  const deletedAt = deletionDeadline === undefined ? undefined : deletionDeadline - graceMs;
  const spec = pod.spec ?? {};
  const containers = containerList(spec, 'containers');
  const initContainers = containerList(spec, 'initContainers');
  const annotations = pod.metadata.annotations ?? {};
  const behavior = podBehavior(annotations);
  const restartPolicy = typeof spec.restartPolicy === 'string' ? spec.restartPolicy : 'Always';
  const readyDelayMs = Math.max(0, options.readyDelayMs);
  const namespace = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name ?? pod.metadata.generateName ?? 'pod';
  const uid = pod.metadata.uid ?? '';
  const ctx: PodContext = {
    podKey: `${namespace}/${name}/${uid}`,
    podRef: `${name}_${namespace}(${uid})`,
    createdAt,
    startDelayMs: Math.floor(readyDelayMs / 2),
    readyDelayMs,
    now: deletedAt !== undefined ? Math.min(now.getTime(), Math.max(deletedAt, createdAt)) : now.getTime(),
  };
  const jobPod = isJobPod(pod);

  const views = containers.map((container): ContainerView => {
    if (isMissingImage(container.image, options.missingImages)) return pullFailureView(ctx, container, true);
    if (behavior === 'image-pull-backoff') return pullFailureView(ctx, container, false);
    if (behavior === 'config-error') return configErrorView(ctx, container);
    if (jobPod) {
      const duration = parseDurationMs(annotations[jobDurationAnnotation]) ?? defaultJobDurationMs;
      const exitCode = annotations[jobResultAnnotation]?.trim() === 'fail' ? 1 : 0;
      return jobRunView(ctx, container, duration, exitCode);
    }
    switch (behavior) {
      case 'crash-loop':
        return crashLoopView(ctx, container, restartPolicy);
      case 'never-ready':
        return healthyView(ctx, container, undefined);
      case 'slow-start': {
        const after = parseDurationMs(annotations[readyAfterAnnotation]) ?? readyDelayMs;
        return healthyView(ctx, container, createdAt + after);
      }
      default:
        return healthyView(ctx, container, createdAt + readyDelayMs);
    }
  });

  const allFinal = views.length > 0 && views.every((view) => view.finalExitCode !== undefined);
  const allStarted = views.length > 0 && views.every((view) => view.everStarted);
  const phase = allFinal
    ? views.every((view) => view.finalExitCode === 0)
      ? 'Succeeded'
      : 'Failed'
    : allStarted
      ? 'Running'
      : 'Pending';

  const terminating = deletedAt !== undefined && now.getTime() >= deletedAt;
  let allReady = views.length > 0 && views.every((view) => view.ready) && !terminating;
  if (terminating) {
    for (const view of views) view.status.ready = false;
  }
  const readyChangedAt = terminating
    ? Math.max(deletedAt, createdAt)
    : allReady
      ? Math.max(...views.map((view) => view.readyChangedAt))
      : Math.max(createdAt, ...views.filter((view) => !view.ready).map((view) => view.readyChangedAt));
  const finished = phase === 'Succeeded' || phase === 'Failed';
  if (finished) allReady = false;
  const unready = views
    .filter((view) => !view.ready || terminating)
    .map((view) => String(view.status.name))
    .sort();
  const notReadyReason = phase === 'Succeeded' || phase === 'Failed' ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMessage =
    notReadyReason === 'PodCompleted' ? undefined : `containers with unready status: [${unready.join(' ')}]`;

  const status: Record<string, unknown> = {
    phase,
    conditions: [
      // A finished pod's sandbox is torn down, so it can no longer start containers.
      finished
        ? condition('PodReadyToStartContainers', false, readyChangedAt)
        : condition('PodReadyToStartContainers', true, createdAt),
      condition('Initialized', true, createdAt),
      condition('Ready', allReady, readyChangedAt, notReadyReason, notReadyMessage),
      condition('ContainersReady', allReady, readyChangedAt, notReadyReason, notReadyMessage),
      condition('PodScheduled', true, createdAt),
    ],
    hostIP,
    hostIPs: [{ ip: hostIP }],
    podIP: podIP(ctx.podKey),
    podIPs: [{ ip: podIP(ctx.podKey) }],
    startTime: formatKubeTime(createdAt),
    containerStatuses: views
      .map((view) => view.status)
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
    qosClass: qosClass(containers),
  };
  if (initContainers.length > 0) {
    status.initContainerStatuses = initContainers.map((container) =>
      baseStatus(container, {
        state: terminatedState(ctx, container, 0, createdAt, createdAt, 0),
        image: normalizeImage(container.image),
        imageID: imageId(container.image),
        containerID: containerId(ctx, container.name, 0),
      }),
    );
  }
  const next = terminating ? undefined : earliest(...views.map((view) => view.nextChangeAt));
  const deletionChange = deletedAt !== undefined && now.getTime() < deletedAt ? deletedAt : undefined;
  const nextChangeAt = earliest(next, deletionChange);
  return nextChangeAt === undefined ? { status } : { status, nextChangeAt: new Date(nextChangeAt) };
}
