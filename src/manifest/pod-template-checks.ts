// The API server's validation of the pod templates Rollgate creates ReplicaSets and Jobs from, offline: so a
// manifest it would refuse is refused by `rollgate validate` with file, line and field, not at create time.
import type { FieldPath } from './field-path.ts';
import { describeValue } from './issue-messages.ts';
import {
  MAX_ANNOTATIONS_BYTES,
  dnsLabelProblem,
  dnsSubdomainProblem,
  labelValueProblem,
  qualifiedNameProblem,
} from './kube-names.ts';
import { checkContainer } from './container-checks.ts';
import type { PodContainerScope } from './container-checks.ts';
import { PodFieldReader } from './pod-field-reader.ts';
import type { LooseRecord } from './pod-field-reader.ts';
import {
  checkQuantity,
  checkQuantityMap,
  checkResourceRequirements,
} from './resource-requirements-checks.ts';
import type { IssueCollector } from './validation-issue.ts';

/** Who creates pods from the template: the rules differ in restartPolicy and activeDeadlineSeconds. */
export type PodTemplateOwner = 'ReplicaSet' | 'Job';

export interface PodTemplateCheckOptions {
  owner: PodTemplateOwner;
  /** True where `{{…}}` argument placeholders stand for values filled in later (analysis job specs). */
  templated?: boolean;
}

// Every volume source of corev1.Volume: a volume sets one (none at all is an emptyDir, as the API server defaults).
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const;

const UTF8 = new TextEncoder();

const RESTART_POLICIES: Record<PodTemplateOwner, readonly string[]> = {
  ReplicaSet: ['Always'],
  Job: ['OnFailure', 'Never'],
};

/** Checks label keys and values and the annotations' keys and total size, as on any object's metadata. */
function checkLabelsAndAnnotations(meta: LooseRecord, at: FieldPath, read: PodFieldReader): void {
  const labels = read.record(meta.labels, [...at, 'labels']);
  for (const [key, value] of Object.entries(labels ?? {})) {
    const path = [...at, 'labels', key];
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem !== undefined) read.error(path, `label key ${keyProblem}`);
    if (read.isPlaceholder(value)) continue;
    if (typeof value !== 'string') {
      read.error(path, `must be a string (quote it in YAML), got ${describeValue(value)}`);
      continue;
    }
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined)
      read.error(path, `label value ${valueProblem}, got ${describeValue(value)}`);
  }
  const annotations = read.record(meta.annotations, [...at, 'annotations']);
  let bytes = 0;
  for (const [key, value] of Object.entries(annotations ?? {})) {
    const keyProblem = qualifiedNameProblem(key.toLowerCase());
    if (keyProblem !== undefined) read.error([...at, 'annotations', key], `annotation key ${keyProblem}`);
    bytes += UTF8.encode(key).length + (typeof value === 'string' ? UTF8.encode(value).length : 0);
  }
  if (bytes > MAX_ANNOTATIONS_BYTES)
    read.error(
      [...at, 'annotations'],
      `must hold at most ${MAX_ANNOTATIONS_BYTES} bytes in all (keys and values), got ${bytes}`,
    );
}

/**
 * Checks labels and annotations Rollgate puts on pods or the objects it creates (a template's metadata,
 * canaryMetadata, a job metric's metadata): label keys are qualified names, label values at most 63
 * characters of the allowed alphabet, annotation keys qualified names, all annotations 256 KiB together.
 */
export function checkObjectLabels(
  meta: unknown,
  at: FieldPath,
  sink: IssueCollector,
  { templated = false }: { templated?: boolean } = {},
): void {
  const read = new PodFieldReader(sink, templated);
  const record = read.record(meta, at);
  if (record !== undefined) checkLabelsAndAnnotations(record, at, read);
}

function checkVolumes(value: unknown, at: FieldPath, read: PodFieldReader): Set<string> | undefined {
  const list = read.list(value, at);
  if (list === undefined) return value === undefined || value === null ? new Set() : undefined;
  const names = new Map<string, number>();
  let complete = true;
  list.forEach((item, index) => {
    const volume = read.record(item, [...at, index]);
    if (volume === undefined) return;
    if (read.isPlaceholder(volume.name)) complete = false;
    const name = read.name(volume.name, [...at, index, 'name'], dnsLabelProblem);
    if (name !== undefined) {
      const first = names.get(name);
      if (first !== undefined)
        read.error(
          [...at, index, 'name'],
          `duplicate volume name ${JSON.stringify(name)} (also volumes[${first}])`,
        );
      else names.set(name, index);
    } else {
      complete = false;
    }
    read.oneOf(volume, VOLUME_SOURCES, [...at, index], 'volume source', { required: false });
    const emptyDir = read.record(volume.emptyDir, [...at, index, 'emptyDir']);
    if (emptyDir !== undefined)
      checkQuantity(emptyDir.sizeLimit, [...at, index, 'emptyDir', 'sizeLimit'], read);
    const claimKeys = ['ephemeral', 'volumeClaimTemplate', 'spec', 'resources'];
    const claimResources = read.nested(volume, claimKeys, [...at, index]);
    for (const field of ['requests', 'limits'] as const)
      checkQuantityMap(claimResources?.[field], [...at, index, ...claimKeys, field], read);
  });
  // A placeholder name could be any volume: mounts are then not matched against the list.
  return complete ? new Set(names.keys()) : undefined;
}

function checkPodSpec(spec: LooseRecord, at: FieldPath, read: PodFieldReader, owner: PodTemplateOwner): void {
  const path = (...rest: Array<string | number>): FieldPath => [...at, ...rest];
  const policies = RESTART_POLICIES[owner];
  const restartPolicy = read.string(spec.restartPolicy, path('restartPolicy'));
  if (restartPolicy === undefined && owner === 'Job' && !read.isPlaceholder(spec.restartPolicy))
    read.error(
      path('restartPolicy'),
      'required for a Job: "OnFailure" or "Never" (unset means "Always", which the API server refuses for Jobs)',
    );
  else if (restartPolicy !== undefined && !policies.includes(restartPolicy))
    read.error(
      path('restartPolicy'),
      `must be ${policies.map((p) => JSON.stringify(p)).join(' or ')} for the pods of a ${owner}, got ${describeValue(restartPolicy)}`,
    );
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    if (owner === 'ReplicaSet')
      read.error(
        path('activeDeadlineSeconds'),
        "must not be set: a ReplicaSet's pods run until they are replaced",
      );
    else read.integerAtLeast(spec.activeDeadlineSeconds, path('activeDeadlineSeconds'), 1);
  }
  if (spec.ephemeralContainers !== undefined && spec.ephemeralContainers !== null)
    read.error(
      path('ephemeralContainers'),
      'must not be set in a pod template (ephemeral containers are added to running pods)',
    );
  for (const field of ['hostname', 'subdomain'] as const)
    read.name(spec[field], path(field), dnsLabelProblem, { required: false });
  for (const field of ['serviceAccountName', 'priorityClassName'] as const)
    read.name(spec[field], path(field), dnsSubdomainProblem, { required: false });
  read.integerAtLeast(spec.terminationGracePeriodSeconds, path('terminationGracePeriodSeconds'), 0);
  checkResourceRequirements(spec.resources, path('resources'), read);
  checkQuantityMap(spec.overhead, path('overhead'), read);

  const scope: PodContainerScope = {
    names: new Map(),
    hostPorts: new Map(),
    volumes: checkVolumes(spec.volumes, path('volumes'), read),
  };
  // Init containers first: their names are the ones a later duplicate among containers points back to.
  const initContainers = read.list(spec.initContainers, path('initContainers')) ?? [];
  initContainers.forEach((container, index) =>
    checkContainer(container, 'initContainers', path('initContainers', index), read, scope),
  );
  const containers = read.list(spec.containers, path('containers'));
  if (containers === undefined || containers.length === 0) {
    if (!read.isPlaceholder(spec.containers))
      read.error(path('containers'), 'at least one container is required');
  }
  (containers ?? []).forEach((container, index) =>
    checkContainer(container, 'containers', path('containers', index), read, scope),
  );
  // Not allowed in a template (reported above); their names still clash with the others' as in a pod.
  (read.list(spec.ephemeralContainers, path('ephemeralContainers')) ?? []).forEach((container, index) =>
    checkContainer(container, 'ephemeralContainers', path('ephemeralContainers', index), read, scope),
  );
}

/**
 * Checks a pod template as the API server would when Rollgate creates a ReplicaSet (a Rollout's
 * `spec.template`) or a Job (a job metric's `job.spec.template`) from it: metadata labels and
 * annotations, the restart policy the owner allows, volumes, and every container (see checkContainer).
 */
export function checkPodTemplate(
  template: unknown,
  at: FieldPath,
  sink: IssueCollector,
  options: PodTemplateCheckOptions,
): void {
  const read = new PodFieldReader(sink, options.templated ?? false);
  const record = read.record(template, at);
  if (record === undefined) {
    if ((template === undefined || template === null) && !read.isPlaceholder(template))
      read.error(at, 'required');
    return;
  }
  const meta = read.record(record.metadata, [...at, 'metadata']);
  if (meta !== undefined) checkLabelsAndAnnotations(meta, [...at, 'metadata'], read);
  const spec = read.record(record.spec, [...at, 'spec']);
  if (spec === undefined) {
    if (record.spec === undefined || record.spec === null) read.error([...at, 'spec'], 'required');
    return;
  }
  checkPodSpec(spec, [...at, 'spec'], read, options.owner);
}
