// The simulated kubelet reports what a real kubelet would, for each behaviour of the annotation contract.

import { describe, expect, it } from 'vitest';
import { kubeletStatus } from '../../../src/sandbox/controllers/index.ts';
import type { ControllerOptions } from '../../../src/sandbox/controllers/index.ts';
import { aPod, at, conditionOf, firstContainer, stateOf } from './pod-fixtures.ts';

const options: ControllerOptions = { missingImages: [], readyDelayMs: 1000 };

describe('kubelet: ready (default)', () => {
  it('goes ContainerCreating → Running → Ready after readyDelayMs', () => {
    const pod = aPod();
    const creating = kubeletStatus(pod, at(100), options);
    expect(creating.status.phase).toBe('Pending');
    expect(stateOf(creating.status).waiting?.reason).toBe('ContainerCreating');
    expect(creating.nextChangeAt).toEqual(at(500));

    const running = kubeletStatus(pod, at(600), options);
    expect(running.status.phase).toBe('Running');
    expect(firstContainer(running.status).started).toBe(true);
    expect(conditionOf(running.status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [app]',
    });
    expect(running.nextChangeAt).toEqual(at(1000));

    const ready = kubeletStatus(pod, at(1000), options);
    expect(conditionOf(ready.status, 'Ready')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:01Z',
    });
    expect(conditionOf(ready.status, 'ContainersReady')?.status).toBe('True');
    expect(firstContainer(ready.status)).toMatchObject({
      ready: true,
      restartCount: 0,
      image: 'docker.io/library/app:1.0',
      started: true,
    });
    expect(String(firstContainer(ready.status).imageID)).toMatch(
      /^docker\.io\/library\/app@sha256:[0-9a-f]{64}$/,
    );
    expect(ready.nextChangeAt).toBeUndefined();
  });

  it('honours a configured ready delay', () => {
    const slow = { ...options, readyDelayMs: 5000 };
    expect(conditionOf(kubeletStatus(aPod(), at(4999), slow).status, 'Ready')?.status).toBe('False');
    expect(conditionOf(kubeletStatus(aPod(), at(5000), slow).status, 'Ready')?.status).toBe('True');
  });

  it('reports pod-level fields deterministically', () => {
    const first = kubeletStatus(aPod(), at(2000), options).status;
    const second = kubeletStatus(aPod(), at(2000), options).status;
    expect(first).toEqual(second);
    expect(first.startTime).toBe('2026-01-01T00:00:00Z');
    expect(String(first.podIP)).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(first.hostIP).toBe('172.18.0.2');
    expect(first.qosClass).toBe('BestEffort');
    expect((first.conditions as Array<{ type: string }>).map((condition) => condition.type)).toEqual([
      'PodReadyToStartContainers',
      'Initialized',
      'Ready',
      'ContainersReady',
      'PodScheduled',
    ]);
  });

  it('derives the QoS class from resources', () => {
    const guaranteed = aPod({}, [
      { name: 'app', image: 'app:1', resources: { limits: { cpu: '1', memory: '1Gi' } } },
    ]);
    const burstable = aPod({}, [{ name: 'app', image: 'app:1', resources: { requests: { cpu: '100m' } } }]);
    expect(kubeletStatus(guaranteed, at(0), options).status.qosClass).toBe('Guaranteed');
    expect(kubeletStatus(burstable, at(0), options).status.qosClass).toBe('Burstable');
  });

  it('marks a pod being deleted not ready from its deletionTimestamp', () => {
    const pod = aPod();
    pod.metadata.deletionTimestamp = '2026-01-01T00:00:10Z';
    const status = kubeletStatus(pod, at(12_000), options).status;
    expect(conditionOf(status, 'Ready')).toMatchObject({
      status: 'False',
      lastTransitionTime: '2026-01-01T00:00:10Z',
    });
    expect(firstContainer(status).ready).toBe(false);
  });
});

describe('kubelet: image pulls', () => {
  it('image-pull-backoff: ErrImagePull, then ImagePullBackOff naming the image, retried with back-off', () => {
    const pod = aPod({ 'sandbox.rollgate.dev/behavior': 'image-pull-backoff' });
    const pulling = kubeletStatus(pod, at(600), options);
    expect(pulling.status.phase).toBe('Pending');
    expect(stateOf(pulling.status).waiting?.reason).toBe('ErrImagePull');
    expect(String(stateOf(pulling.status).waiting?.message)).toContain(
      'failed to pull and unpack image "docker.io/library/app:1.0"',
    );
    expect(String(stateOf(pulling.status).waiting?.message)).toContain('pull access denied');
    expect(pulling.nextChangeAt).toEqual(at(2500));

    const backOff = kubeletStatus(pod, at(3000), options);
    expect(stateOf(backOff.status).waiting).toEqual({
      reason: 'ImagePullBackOff',
      message: `Back-off pulling image "app:1.0": ErrImagePull: ${String(stateOf(pulling.status).waiting?.message)}`,
    });
    expect(backOff.nextChangeAt).toEqual(at(10_500));
    expect(stateOf(kubeletStatus(pod, at(10_600), options).status).waiting?.reason).toBe('ErrImagePull');
    // second back-off is 20s: from 10.5s to 30.5s
    expect(stateOf(kubeletStatus(pod, at(30_000), options).status).waiting?.reason).toBe('ImagePullBackOff');
    expect(stateOf(kubeletStatus(pod, at(30_600), options).status).waiting?.reason).toBe('ErrImagePull');
    expect(conditionOf(kubeletStatus(pod, at(600_000), options).status, 'Ready')?.status).toBe('False');
  });

  it('a missing image fails like a registry that lacks it (not found), other images are unaffected', () => {
    const missing = { ...options, missingImages: ['app:9.*', 'registry.local/*'] };
    const pod = aPod({}, [{ name: 'app', image: 'app:9.9' }]);
    const status = kubeletStatus(pod, at(600), missing).status;
    expect(stateOf(status).waiting?.reason).toBe('ErrImagePull');
    expect(String(stateOf(status).waiting?.message)).toMatch(/docker\.io\/library\/app:9\.9: not found$/);
    const backOff = stateOf(kubeletStatus(pod, at(5000), missing).status).waiting;
    expect(backOff?.reason).toBe('ImagePullBackOff');
    expect(String(backOff?.message)).toMatch(
      /^Back-off pulling image "app:9\.9": ErrImagePull: rpc error: code = NotFound .*: not found$/,
    );
    const untagged = aPod({}, [{ name: 'app', image: 'registry.local/app' }]);
    expect(String(stateOf(kubeletStatus(untagged, at(5000), missing).status).waiting?.message)).toMatch(
      /^Back-off pulling image "registry\.local\/app:latest": ErrImagePull: /,
    );
    const local = aPod({}, [{ name: 'app', image: 'registry.local/team/app:2' }]);
    expect(stateOf(kubeletStatus(local, at(600), missing).status).waiting?.reason).toBe('ErrImagePull');
    const fine = kubeletStatus(aPod({}, [{ name: 'app', image: 'app:1.0' }]), at(1000), missing).status;
    expect(conditionOf(fine, 'Ready')?.status).toBe('True');
  });

  it('only the container with the missing image waits; the pod stays Pending', () => {
    const pod = aPod({}, [
      { name: 'app', image: 'app:9.9' },
      { name: 'sidecar', image: 'proxy:1' },
    ]);
    const status = kubeletStatus(pod, at(5000), { ...options, missingImages: ['app:9.*'] }).status;
    expect(status.phase).toBe('Pending');
    const byName = Object.fromEntries(
      (status.containerStatuses as Array<Record<string, unknown>>).map((entry) => [entry.name, entry]),
    );
    expect(byName.sidecar?.ready).toBe(true);
    expect(byName.app?.ready).toBe(false);
    expect(conditionOf(status, 'Ready')?.message).toBe('containers with unready status: [app]');
  });
});

describe('kubelet: crash-loop', () => {
  const pod = aPod({ 'sandbox.rollgate.dev/behavior': 'crash-loop' });

  it('runs, is briefly Ready, exits with code 1 (Error), restarts at once, then backs off', () => {
    const firstRun = kubeletStatus(pod, at(1500), options).status;
    expect(conditionOf(firstRun, 'Ready')?.status).toBe('True');
    expect(firstContainer(firstRun).restartCount).toBe(0);

    const crashed = kubeletStatus(pod, at(3200), options).status;
    expect(stateOf(crashed).terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(conditionOf(crashed, 'Ready')?.status).toBe('False');
    expect(crashed.phase).toBe('Running');

    const secondRun = kubeletStatus(pod, at(4200), options).status;
    expect(firstContainer(secondRun).restartCount).toBe(1);
    expect(stateOf(secondRun).running).toBeDefined();
    expect(
      (firstContainer(secondRun).lastState as Record<string, Record<string, unknown>>).terminated,
    ).toMatchObject({ exitCode: 1, reason: 'Error', finishedAt: '2026-01-01T00:00:03Z' });

    const backOff = kubeletStatus(pod, at(8000), options).status;
    expect(stateOf(backOff).waiting).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'back-off 10s restarting failed container=app pod=web-abc_default(uid-1)',
    });
    expect(firstContainer(backOff).restartCount).toBe(1);
  });

  it('restartCount grows and the back-off doubles up to 5m', () => {
    const messages: string[] = [];
    let restarts = 0;
    let readyFlaps = 0;
    let wasReady = false;
    for (let ms = 0; ms < 40 * 60_000; ms += 250) {
      const status = kubeletStatus(pod, at(ms), options).status;
      const container = firstContainer(status);
      expect(container.restartCount as number).toBeGreaterThanOrEqual(restarts);
      restarts = container.restartCount as number;
      const message = stateOf(status).waiting?.message;
      if (typeof message === 'string' && messages[messages.length - 1] !== message) messages.push(message);
      const ready = conditionOf(status, 'Ready')?.status === 'True';
      if (ready && !wasReady) readyFlaps += 1;
      wasReady = ready;
    }
    const backOffs = messages.map((message) => /back-off (\S+)/.exec(message)?.[1]);
    expect(backOffs.slice(0, 7)).toEqual(['10s', '20s', '40s', '1m20s', '2m40s', '5m0s']);
    expect(restarts).toBeGreaterThan(8);
    expect(readyFlaps).toBe(restarts + 1);
  });

  it('each Ready flap lasts two seconds and nextChangeAt points at the crash', () => {
    const readyAt = kubeletStatus(pod, at(1000), options);
    expect(conditionOf(readyAt.status, 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:00:01Z');
    expect(readyAt.nextChangeAt).toEqual(at(3000));
  });
});

describe('kubelet: never-ready, config-error, slow-start', () => {
  it('never-ready: Running and started, readiness never passes', () => {
    const result = kubeletStatus(
      aPod({ 'sandbox.rollgate.dev/behavior': 'never-ready' }),
      at(3_600_000),
      options,
    );
    expect(result.status.phase).toBe('Running');
    expect(firstContainer(result.status)).toMatchObject({ ready: false, started: true, restartCount: 0 });
    expect(conditionOf(result.status, 'ContainersReady')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
    });
    expect(result.nextChangeAt).toBeUndefined();
  });

  it('config-error: CreateContainerConfigError naming the missing config map', () => {
    const pod = aPod({ 'sandbox.rollgate.dev/behavior': 'config-error' }, [
      { name: 'app', image: 'app:1', envFrom: [{ configMapRef: { name: 'app-config' } }] },
    ]);
    const status = kubeletStatus(pod, at(5000), options).status;
    expect(status.phase).toBe('Pending');
    expect(stateOf(status).waiting).toEqual({
      reason: 'CreateContainerConfigError',
      message: 'configmap "app-config" not found',
    });
  });

  it('slow-start: Ready only after the ready-after duration', () => {
    const pod = aPod({
      'sandbox.rollgate.dev/behavior': 'slow-start',
      'sandbox.rollgate.dev/ready-after': '20s',
    });
    const before = kubeletStatus(pod, at(19_999), options);
    expect(before.status.phase).toBe('Running');
    expect(conditionOf(before.status, 'Ready')?.status).toBe('False');
    expect(before.nextChangeAt).toEqual(at(20_000));
    expect(conditionOf(kubeletStatus(pod, at(20_000), options).status, 'Ready')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:20Z',
    });
  });
});

describe('kubelet: Job pods', () => {
  function jobPod(annotations: Record<string, string>): ReturnType<typeof aPod> {
    const pod = aPod(annotations);
    pod.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'check', uid: 'job-uid' }];
    if (pod.spec !== undefined) pod.spec.restartPolicy = 'Never';
    return pod;
  }

  it('succeeds after the default 2s run with exit code 0', () => {
    const pod = jobPod({});
    const running = kubeletStatus(pod, at(1000), options);
    expect(running.status.phase).toBe('Running');
    expect(running.nextChangeAt).toEqual(at(2500));
    const done = kubeletStatus(pod, at(2500), options).status;
    expect(done.phase).toBe('Succeeded');
    expect(stateOf(done).terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(conditionOf(done, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    expect(conditionOf(done, 'PodReadyToStartContainers')).toMatchObject({
      status: 'False',
      lastTransitionTime: '2026-01-01T00:00:02Z',
    });
  });

  it('fails with exit code 1 after the job-duration when job-result is fail', () => {
    const pod = jobPod({
      'sandbox.rollgate.dev/job-result': 'fail',
      'sandbox.rollgate.dev/job-duration': '5s',
    });
    expect(kubeletStatus(pod, at(5000), options).status.phase).toBe('Running');
    const done = kubeletStatus(pod, at(5500), options).status;
    expect(done.phase).toBe('Failed');
    expect(stateOf(done).terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });
});

describe('kubelet: graceful deletion', () => {
  it('stops reporting Ready from the delete request (deletionTimestamp minus the grace period)', () => {
    const pod = aPod();
    pod.metadata.deletionTimestamp = '2026-01-01T00:00:40Z';
    pod.metadata.deletionGracePeriodSeconds = 30;
    expect(conditionOf(kubeletStatus(pod, at(9000), options).status, 'Ready')?.status).toBe('True');
    const terminating = kubeletStatus(pod, at(10_000), options);
    expect(conditionOf(terminating.status, 'Ready')).toMatchObject({
      status: 'False',
      lastTransitionTime: '2026-01-01T00:00:10Z',
    });
    expect(terminating.nextChangeAt).toBeUndefined();
    expect(kubeletStatus(pod, at(9000), options).nextChangeAt).toEqual(at(10_000));
  });
});
