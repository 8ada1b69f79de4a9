// The API server's rules for one container of a pod template: its name, ports, environment, resources,
// probes and hooks, and the volumes it mounts.
import type { FieldPath } from './field-path.ts';
import { formatFieldPath } from './field-path.ts';
import { describeValue } from './issue-messages.ts';
import {
  configKeyProblem,
  dnsLabelProblem,
  dnsSubdomainProblem,
  envVarNameProblem,
  isNewStyleEnvVarName,
  isPortNumber,
  portNameProblem,
} from './kube-names.ts';
import type { PodFieldReader } from './pod-field-reader.ts';
import { checkLifecycle, checkProbe } from './probe-checks.ts';
import { checkQuantity, checkResourceRequirements } from './resource-requirements-checks.ts';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const ENV_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'] as const;
// What an environment variable may read from the pod (the downward API); labels and annotations one key at a time.
const ENV_FIELD_PATHS = new Set([
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);
const SUBSCRIPTED_FIELD_PATH = /^metadata\.(labels|annotations)\['[^']+'\]$/;
const ENV_RESOURCE = /^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/;

/** What the containers of one pod share while each is checked: names, host ports and the pod's volumes. */
export interface PodContainerScope {
  /** Container names seen so far (containers and initContainers share one namespace), with where. */
  readonly names: Map<string, string>;
  /** `protocol/hostIP/hostPort` of the containers seen so far, with where: a host port serves one container. */
  readonly hostPorts: Map<string, string>;
  /** The pod's volume names, or undefined when the volumes could not be read (mounts are then not matched). */
  readonly volumes: ReadonlySet<string> | undefined;
}

// `hostPorts` is undefined for init containers: they run one after another, so theirs may repeat.
function checkPorts(
  value: unknown,
  at: FieldPath,
  read: PodFieldReader,
  hostPorts: Map<string, string> | undefined,
): void {
  const names = new Map<string, number>();
  (read.list(value, at) ?? []).forEach((item, index) => {
    const portAt = (...rest: string[]): FieldPath => [...at, index, ...rest];
    const port = read.record(item, [...at, index]);
    if (port === undefined) return;
    const name = read.name(port.name, portAt('name'), portNameProblem, { required: false });
    if (name !== undefined) {
      const first = names.get(name);
      if (first !== undefined)
        read.error(
          portAt('name'),
          `duplicate port name ${JSON.stringify(name)} in this container (also ports[${first}])`,
        );
      else names.set(name, index);
    }
    const containerPort = read.integer(port.containerPort, portAt('containerPort'));
    if (port.containerPort === undefined || port.containerPort === null)
      read.error(portAt('containerPort'), 'required');
    else if (containerPort !== undefined && !isPortNumber(containerPort))
      read.error(portAt('containerPort'), `must be a port number between 1 and 65535, got ${containerPort}`);
    // 0 is "no host port" (what the API server defaults to).
    const hostPort = read.integer(port.hostPort, portAt('hostPort'));
    if (hostPort !== undefined && hostPort !== 0 && !isPortNumber(hostPort))
      read.error(
        portAt('hostPort'),
        `must be a port number between 1 and 65535 (or 0 for none), got ${hostPort}`,
      );
    const protocol = read.string(port.protocol, portAt('protocol'));
    if (protocol !== undefined && !PROTOCOLS.includes(protocol))
      read.error(
        portAt('protocol'),
        `must be one of ${PROTOCOLS.join(', ')}, got ${describeValue(protocol)}`,
      );
    if (hostPorts !== undefined && hostPort !== undefined && hostPort !== 0) {
      const hostIP = typeof port.hostIP === 'string' ? port.hostIP : '';
      const key = `${protocol ?? 'TCP'}/${hostIP}/${hostPort}`;
      const first = hostPorts.get(key);
      if (first !== undefined)
        read.error(
          portAt('hostPort'),
          `duplicate host port ${hostPort}/${protocol ?? 'TCP'}: ${first} takes it already`,
        );
      else hostPorts.set(key, formatFieldPath([...at, index]));
    }
  });
}

function checkEnvSource(value: unknown, at: FieldPath, read: PodFieldReader): void {
  const source = read.record(value, at);
  if (source === undefined) return;
  const kind = read.oneOf(source, ENV_SOURCES, at, 'source');
  if (kind === undefined) return;
  const ref = read.record(source[kind], [...at, kind]);
  if (ref === undefined) return;
  const refAt = (field: string): FieldPath => [...at, kind, field];
  switch (kind) {
    case 'fieldRef': {
      const path = read.string(ref.fieldPath, refAt('fieldPath'));
      if (path === undefined && !read.isPlaceholder(ref.fieldPath))
        read.error(refAt('fieldPath'), 'required');
      else if (path !== undefined && !ENV_FIELD_PATHS.has(path) && !SUBSCRIPTED_FIELD_PATH.test(path))
        read.error(
          refAt('fieldPath'),
          `must be one of ${[...ENV_FIELD_PATHS].join(', ')}, metadata.labels['<key>'] or metadata.annotations['<key>'], got ${describeValue(path)}`,
        );
      break;
    }
    case 'resourceFieldRef': {
      const resource = read.string(ref.resource, refAt('resource'));
      if (resource === undefined && !read.isPlaceholder(ref.resource))
        read.error(refAt('resource'), 'required');
      else if (resource !== undefined && !ENV_RESOURCE.test(resource))
        read.error(
          refAt('resource'),
          `must be limits.<name> or requests.<name> for cpu, memory, ephemeral-storage or hugepages-<size>, got ${describeValue(resource)}`,
        );
      checkQuantity(ref.divisor, refAt('divisor'), read);
      break;
    }
    default:
      read.name(ref.key, refAt('key'), configKeyProblem);
      read.name(ref.name, refAt('name'), dnsSubdomainProblem, { required: false });
      break;
  }
}

function checkEnv(value: unknown, at: FieldPath, read: PodFieldReader): void {
  (read.list(value, at) ?? []).forEach((item, index) => {
    const variable = read.record(item, [...at, index]);
    if (variable === undefined) return;
    const name = read.name(variable.name, [...at, index, 'name'], envVarNameProblem);
    if (name !== undefined && isNewStyleEnvVarName(name))
      read.warn(
        [...at, index, 'name'],
        `API servers before Kubernetes 1.32 refuse this name (they allow letters, digits, "-", "_" and ".", not starting with a digit), got ${describeValue(name)}`,
      );
    const hasValue = typeof variable.value === 'string' && variable.value !== '';
    if (variable.valueFrom !== undefined && variable.valueFrom !== null) {
      if (hasValue)
        read.error([...at, index, 'valueFrom'], 'must not be set together with value: give one of them');
      checkEnvSource(variable.valueFrom, [...at, index, 'valueFrom'], read);
    }
  });
}

function checkEnvFrom(value: unknown, at: FieldPath, read: PodFieldReader): void {
  (read.list(value, at) ?? []).forEach((item, index) => {
    const source = read.record(item, [...at, index]);
    if (source === undefined) return;
    read.oneOf(source, ['configMapRef', 'secretRef'], [...at, index], 'source');
    if (typeof source.prefix === 'string' && source.prefix !== '')
      read.name(source.prefix, [...at, index, 'prefix'], envVarNameProblem);
  });
}

function checkVolumeMounts(
  value: unknown,
  at: FieldPath,
  read: PodFieldReader,
  scope: PodContainerScope,
): void {
  const paths = new Map<string, number>();
  (read.list(value, at) ?? []).forEach((item, index) => {
    const mount = read.record(item, [...at, index]);
    if (mount === undefined) return;
    const name = read.string(mount.name, [...at, index, 'name']);
    if (name === undefined || name === '') {
      if (!read.isPlaceholder(mount.name)) read.error([...at, index, 'name'], 'required');
    } else if (scope.volumes !== undefined && !scope.volumes.has(name)) {
      read.error(
        [...at, index, 'name'],
        `must name one of the pod's volumes (${[...scope.volumes].join(', ') || 'it has none'}), got ${describeValue(name)}`,
      );
    }
    const mountPath = read.string(mount.mountPath, [...at, index, 'mountPath']);
    if (mountPath === undefined || mountPath === '') {
      if (!read.isPlaceholder(mount.mountPath)) read.error([...at, index, 'mountPath'], 'required');
      return;
    }
    const first = paths.get(mountPath);
    if (first !== undefined)
      read.error(
        [...at, index, 'mountPath'],
        `duplicate mountPath ${JSON.stringify(mountPath)} in this container (also volumeMounts[${first}])`,
      );
    else paths.set(mountPath, index);
    const subPath = read.string(mount.subPath, [...at, index, 'subPath']);
    if (subPath !== undefined && (subPath.startsWith('/') || subPath.split('/').includes('..')))
      read.error(
        [...at, index, 'subPath'],
        `must be a relative path without "..", got ${describeValue(subPath)}`,
      );
  });
}

/**
 * Checks one container of `containers`, `initContainers` or `ephemeralContainers` (`list` says which): a
 * DNS-label name unique in the pod, an image (for ephemeral containers, which a template may not hold, only
 * these and their quantities), ports, environment, resources, probes and hooks (which an init container may set only
 * as a sidecar, `restartPolicy: Always`), and mounts of the pod's volumes.
 */
export function checkContainer(
  value: unknown,
  list: 'containers' | 'initContainers' | 'ephemeralContainers',
  at: FieldPath,
  read: PodFieldReader,
  scope: PodContainerScope,
): void {
  const container = read.record(value, at);
  if (container === undefined) {
    if (value === undefined || value === null) read.error(at, 'must be a container, got null');
    return;
  }
  const path = (...rest: Array<string | number>): FieldPath => [...at, ...rest];
  const name = read.name(container.name, path('name'), dnsLabelProblem);
  if (name !== undefined) {
    const first = scope.names.get(name);
    if (first !== undefined)
      read.error(path('name'), `duplicate container name ${JSON.stringify(name)} (also ${first})`);
    else scope.names.set(name, `${list}[${String(at.at(-1))}]`);
  }
  if (container.image === undefined || container.image === null || container.image === '')
    read.error(path('image'), 'required');
  else read.string(container.image, path('image'));

  if (list === 'ephemeralContainers') {
    // A pod template may not hold them at all (reported on the list); their quantities would still fail to
    // decode before anything else is looked at.
    checkResourceRequirements(container.resources, path('resources'), read);
    return;
  }
  const restartPolicy = read.string(container.restartPolicy, path('restartPolicy'));
  const sidecar = list === 'initContainers' && restartPolicy === 'Always';
  if (restartPolicy !== undefined && list === 'initContainers' && !sidecar)
    read.error(
      path('restartPolicy'),
      `must be "Always" (a sidecar) when set on an init container, got ${describeValue(restartPolicy)}`,
    );
  if (restartPolicy !== undefined && list === 'containers')
    read.error(
      path('restartPolicy'),
      'must not be set on a container (only an init container may set it, to run as a sidecar)',
    );

  checkPorts(container.ports, path('ports'), read, list === 'containers' ? scope.hostPorts : undefined);
  checkEnv(container.env, path('env'), read);
  checkEnvFrom(container.envFrom, path('envFrom'), read);
  checkResourceRequirements(container.resources, path('resources'), read);
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    if (container[probe] === undefined || container[probe] === null) continue;
    if (list === 'initContainers' && !sidecar)
      read.error(
        path(probe),
        'must not be set on an init container (unless it is a sidecar, restartPolicy: Always)',
      );
    else checkProbe(container[probe], probe, path(probe), read);
  }
  if (container.lifecycle !== undefined && container.lifecycle !== null) {
    if (list === 'initContainers' && !sidecar)
      read.error(
        path('lifecycle'),
        'must not be set on an init container (unless it is a sidecar, restartPolicy: Always)',
      );
    else checkLifecycle(container.lifecycle, path('lifecycle'), read);
  }
  checkVolumeMounts(container.volumeMounts, path('volumeMounts'), read, scope);
}
