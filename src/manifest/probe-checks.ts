// The API server's rules for a container's probes and lifecycle hooks: one handler each, ports as numbers
// (1–65535) or port names, and the thresholds and periods it accepts.
import type { FieldPath } from './field-path.ts';
import { describeValue } from './issue-messages.ts';
import { httpHeaderNameProblem, isPortNumber, portNameProblem } from './kube-names.ts';
import type { PodFieldReader } from './pod-field-reader.ts';

export type ProbeKind = 'livenessProbe' | 'readinessProbe' | 'startupProbe';

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;
// Fields the API server requires to be >= 0 (0 means its default: timeout 1s, period 10s, thresholds 1 and 3).
const NON_NEGATIVE_FIELDS = [
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
] as const;

/** A port as a probe or hook names it: a number 1–65535 or the name of one of the container's ports. */
export function checkPortNumberOrName(value: unknown, path: FieldPath, read: PodFieldReader): void {
  if (value === undefined || value === null || value === '') {
    if (!read.isPlaceholder(value)) read.error(path, 'required');
    return;
  }
  if (read.isPlaceholder(value)) return;
  if (typeof value === 'number') {
    if (!isPortNumber(value)) read.error(path, `must be a port number between 1 and 65535, got ${value}`);
    return;
  }
  if (typeof value !== 'string') {
    read.error(path, `must be a port number or a port name, got ${describeValue(value)}`);
    return;
  }
  const problem = portNameProblem(value);
  if (problem !== undefined)
    read.error(
      path,
      `must be a port number or a port name (a port name ${problem}), got ${describeValue(value)}`,
    );
}

function checkHandler(
  handler: Record<string, unknown>,
  kinds: readonly string[],
  at: FieldPath,
  read: PodFieldReader,
): void {
  const kind = read.oneOf(handler, kinds, at, 'handler');
  const path = (...rest: Array<string | number>): FieldPath => [...at, ...rest];
  switch (kind) {
    case 'exec': {
      const exec = read.record(handler.exec, path('exec'));
      const command = read.list(exec?.command, path('exec', 'command'));
      if (exec !== undefined && (command === undefined || command.length === 0))
        read.error(path('exec', 'command'), 'required: the command to run');
      break;
    }
    case 'httpGet': {
      const http = read.record(handler.httpGet, path('httpGet'));
      if (http === undefined) break;
      checkPortNumberOrName(http.port, path('httpGet', 'port'), read);
      const scheme = read.string(http.scheme, path('httpGet', 'scheme'));
      if (scheme !== undefined && scheme !== 'HTTP' && scheme !== 'HTTPS')
        read.error(path('httpGet', 'scheme'), `must be "HTTP" or "HTTPS", got ${describeValue(scheme)}`);
      (read.list(http.httpHeaders, path('httpGet', 'httpHeaders')) ?? []).forEach((header, index) => {
        const headerAt = path('httpGet', 'httpHeaders', index);
        const entry = read.record(header, headerAt);
        if (entry !== undefined) read.name(entry.name, [...headerAt, 'name'], httpHeaderNameProblem);
      });
      break;
    }
    case 'tcpSocket': {
      const tcp = read.record(handler.tcpSocket, path('tcpSocket'));
      if (tcp !== undefined) checkPortNumberOrName(tcp.port, path('tcpSocket', 'port'), read);
      break;
    }
    case 'grpc': {
      const grpc = read.record(handler.grpc, path('grpc'));
      if (grpc === undefined) break;
      // A gRPC probe takes a number only: it has no named-port lookup.
      const port = read.integer(grpc.port, path('grpc', 'port'));
      if (port === undefined && grpc.port === undefined) read.error(path('grpc', 'port'), 'required');
      else if (port !== undefined && !isPortNumber(port))
        read.error(path('grpc', 'port'), `must be a port number between 1 and 65535, got ${port}`);
      break;
    }
    case 'sleep': {
      const sleep = read.record(handler.sleep, path('sleep'));
      if (sleep !== undefined) read.integerAtLeast(sleep.seconds, path('sleep', 'seconds'), 0);
      break;
    }
    default:
      break;
  }
}

/**
 * Checks one probe: exactly one of exec, httpGet, tcpSocket and grpc; non-negative timings and thresholds;
 * a successThreshold of 1 for liveness and startup probes (they cannot ask for several successes); a
 * positive terminationGracePeriodSeconds, which readiness probes may not set at all.
 */
export function checkProbe(value: unknown, kind: ProbeKind, at: FieldPath, read: PodFieldReader): void {
  const probe = read.record(value, at);
  if (probe === undefined) return;
  checkHandler(probe, PROBE_HANDLERS, at, read);
  const values = new Map(
    NON_NEGATIVE_FIELDS.map((field) => [field, read.integerAtLeast(probe[field], [...at, field], 0)]),
  );
  const success = values.get('successThreshold');
  if (kind !== 'readinessProbe' && success !== undefined && success > 1)
    read.error([...at, 'successThreshold'], `must be 1 for a ${kind}, got ${success}`);
  if (probe.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null) {
    if (kind === 'readinessProbe')
      read.error([...at, 'terminationGracePeriodSeconds'], 'must not be set on a readinessProbe');
    else
      read.integerAtLeast(probe.terminationGracePeriodSeconds, [...at, 'terminationGracePeriodSeconds'], 1);
  }
}

/** Checks `lifecycle`: postStart and preStop each hold exactly one of exec, httpGet, tcpSocket and sleep. */
export function checkLifecycle(value: unknown, at: FieldPath, read: PodFieldReader): void {
  const lifecycle = read.record(value, at);
  if (lifecycle === undefined) return;
  for (const hook of ['postStart', 'preStop'] as const) {
    const handler = read.record(lifecycle[hook], [...at, hook]);
    if (handler !== undefined) checkHandler(handler, LIFECYCLE_HANDLERS, [...at, hook], read);
  }
}
