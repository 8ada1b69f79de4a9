// The pod templates Rollgate creates ReplicaSets and Jobs from, validated as the API server would: a realistic
// Rollout and job metric pass; each malformed variant fails with its own error at the field's line.
import { describe, it, expect } from 'vitest';
import { validateManifests } from '../../../src/manifest/validate.ts';

// A Rollout as a team keeps it: init container, sidecar, probes, ports, env, volumes, hugepages and a GPU.
const ROLLOUT = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  replicas: 4
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels:
        app: checkout
        app.kubernetes.io/version: "1.4.2"
      annotations:
        prometheus.io/scrape: "true"
    spec:
      serviceAccountName: checkout
      terminationGracePeriodSeconds: 30
      initContainers:
        - name: migrate
          image: registry.example.com/checkout-migrate:1.4.2
          env:
            - {name: DATABASE_URL, valueFrom: {secretKeyRef: {name: checkout-db, key: url}}}
        - name: log-shipper
          image: fluent/fluent-bit:3.0
          restartPolicy: Always
          readinessProbe:
            httpGet: {path: /api/v1/health, port: 2020}
      containers:
        - name: checkout
          image: registry.example.com/checkout:1.4.2
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
            - {name: metrics, containerPort: 9090}
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: TEAM, valueFrom: {fieldRef: {fieldPath: "metadata.labels['team']"}}}
            - {name: MEMORY_LIMIT, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
            - {name: LOG_LEVEL, value: info}
          envFrom:
            - configMapRef: {name: checkout-config}
              prefix: CHECKOUT_
          resources:
            requests: {cpu: 250m, memory: 256Mi, hugepages-2Mi: 64Mi, nvidia.com/gpu: 1}
            limits: {cpu: "1", memory: 512Mi, hugepages-2Mi: 64Mi, nvidia.com/gpu: 1, ephemeral-storage: 2Gi}
          readinessProbe:
            httpGet: {path: /ready, port: http, scheme: HTTP, httpHeaders: [{name: X-Probe, value: "1"}]}
            periodSeconds: 5
            failureThreshold: 3
          livenessProbe:
            tcpSocket: {port: 8080}
            initialDelaySeconds: 10
            terminationGracePeriodSeconds: 20
          startupProbe:
            grpc: {port: 9091}
            failureThreshold: 30
          lifecycle:
            preStop:
              sleep: {seconds: 5}
          volumeMounts:
            - {name: cache, mountPath: /var/cache/checkout}
            - {name: config, mountPath: /etc/checkout, readOnly: true}
      volumes:
        - name: cache
          emptyDir: {sizeLimit: 1Gi}
        - name: config
          configMap: {name: checkout-config}
        - name: scratch
          ephemeral:
            volumeClaimTemplate:
              spec:
                accessModes: [ReadWriteOnce]
                resources: {requests: {storage: 10Gi}}
  strategy:
    canary:
      steps:
        - setWeight: 25
        - pause: {duration: 5m}
`;

const TEMPLATE = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: smoke-test
spec:
  args:
    - name: image
    - name: memory
  metrics:
    - name: smoke
      provider:
        job:
          metadata:
            labels: {purpose: smoke-test}
          spec:
            backoffLimit: 1
            template:
              metadata:
                labels: {job: "{{args.image}}"}
              spec:
                restartPolicy: Never
                containers:
                  - name: smoke
                    image: "{{args.image}}"
                    command: [/bin/smoke, --target, http://checkout-canary]
                    resources:
                      requests: {memory: "{{args.memory}}", cpu: 100m}
`;

/** Validates `text` and lists its errors as `line:col path: message` (warnings apart). */
function check(text: string) {
  const report = validateManifests([{ file: 'app.yaml', text }]);
  return {
    errors: report.objects.flatMap((o) => o.errors.map((e) => `${e.line}:${e.col} ${e.path}: ${e.message}`)),
    warnings: report.objects.flatMap((o) => o.warnings.map((e) => `${e.line} ${e.path}: ${e.message}`)),
  };
}

/** `text` with `from` (which must occur exactly once) replaced by `to`. */
function replaced(text: string, from: string, to: string): string {
  expect(text.split(from).length, `exactly one ${JSON.stringify(from)}`).toBe(2);
  return text.replace(from, to);
}

/** The 1-based line of the first line holding `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  expect(index, `a line with ${JSON.stringify(needle)}`).toBeGreaterThanOrEqual(0);
  return index + 1;
}

describe('a realistic pod template passes', () => {
  it('the Rollout: no error, no warning', () => {
    expect(check(ROLLOUT)).toEqual({ errors: [], warnings: [] });
  });

  it('the job metric, with argument placeholders where values come later', () => {
    expect(check(TEMPLATE)).toEqual({ errors: [], warnings: [] });
  });
});

// Each row: what to replace in ROLLOUT, by what, the line holding the fault (a text on it), and the error.
const ROLLOUT_FAULTS: Array<[string, string, string, string, string]> = [
  // Resource quantities and names.
  [
    'a quantity that does not parse',
    'cpu: 250m,',
    'cpu: 250 m,',
    'cpu: 250 m',
    'spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "250 m": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
  ],
  [
    'a negative quantity',
    'ephemeral-storage: 2Gi',
    'ephemeral-storage: -2Gi',
    'ephemeral-storage: -2Gi',
    'spec.template.spec.containers[0].resources.limits.ephemeral-storage: must not be negative, got "-2Gi"',
  ],
  [
    'a request above its limit',
    'memory: 256Mi,',
    'memory: 1Gi,',
    'memory: 1Gi,',
    'spec.template.spec.containers[0].resources.requests.memory: must be less than or equal to the memory limit (512Mi)',
  ],
  [
    'an unknown resource name without a domain',
    'ephemeral-storage: 2Gi}',
    'ephemeral-storage: 2Gi, gpu: 1}',
    'ephemeral-storage: 2Gi, gpu: 1',
    'spec.template.spec.containers[0].resources.limits.gpu: must be cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource with a domain (e.g. nvidia.com/gpu), got "gpu"',
  ],
  [
    'an extended resource in fractions',
    'requests: {cpu: 250m, memory: 256Mi, hugepages-2Mi: 64Mi, nvidia.com/gpu: 1}',
    'requests: {cpu: 250m, memory: 256Mi, hugepages-2Mi: 64Mi, nvidia.com/gpu: 500m}',
    'nvidia.com/gpu: 500m',
    'spec.template.spec.containers[0].resources.requests["nvidia.com/gpu"]: must be a whole number: nvidia.com/gpu is an extended resource, got "500m"',
  ],
  [
    'an extended resource requested without a limit',
    'limits: {cpu: "1", memory: 512Mi, hugepages-2Mi: 64Mi, nvidia.com/gpu: 1,',
    'limits: {cpu: "1", memory: 512Mi, hugepages-2Mi: 64Mi,',
    'limits: {cpu: "1"',
    'spec.template.spec.containers[0].resources.limits: must set nvidia.com/gpu (requested 1): an extended resource cannot be overcommitted',
  ],
  [
    'hugepages requested below their limit',
    'memory: 512Mi, hugepages-2Mi: 64Mi',
    'memory: 512Mi, hugepages-2Mi: 128Mi',
    'requests: {cpu: 250m',
    'spec.template.spec.containers[0].resources.requests.hugepages-2Mi: must equal the hugepages-2Mi limit (128Mi): hugepages cannot be overcommitted',
  ],
  [
    'hugepages not a multiple of the page size',
    'requests: {cpu: 250m, memory: 256Mi, hugepages-2Mi: 64Mi,',
    'requests: {cpu: 250m, memory: 256Mi, hugepages-2Mi: 3Mi,',
    'hugepages-2Mi: 3Mi',
    'spec.template.spec.containers[0].resources.requests.hugepages-2Mi: must be a multiple of the page size (2Mi), got "3Mi"',
  ],
  [
    'an emptyDir sizeLimit that does not parse',
    'sizeLimit: 1Gi',
    'sizeLimit: 1GB',
    'sizeLimit: 1GB',
    'spec.template.spec.volumes[0].emptyDir.sizeLimit: invalid quantity "1GB": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
  ],
  [
    "an ephemeral volume's storage request that does not parse",
    'storage: 10Gi',
    'storage: ten',
    'storage: ten',
    'spec.template.spec.volumes[2].ephemeral.volumeClaimTemplate.spec.resources.requests.storage: invalid quantity "ten": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
  ],
  [
    'a downward-API divisor that does not parse',
    'divisor: 1Mi',
    'divisor: 1MB',
    'divisor: 1MB',
    'spec.template.spec.containers[0].env[2].valueFrom.resourceFieldRef.divisor: invalid quantity "1MB": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
  ],
  // Probes and hooks.
  [
    'a probe with two handlers',
    'tcpSocket: {port: 8080}',
    'tcpSocket: {port: 8080}\n            exec: {command: [true]}',
    'livenessProbe:',
    'spec.template.spec.containers[0].livenessProbe: must set only one handler, got exec and tcpSocket',
  ],
  [
    'a probe with no handler',
    '            grpc: {port: 9091}\n',
    '',
    'startupProbe:',
    'spec.template.spec.containers[0].startupProbe: must set one handler: exec, httpGet, tcpSocket, grpc',
  ],
  [
    'a probe port out of range',
    'tcpSocket: {port: 8080}',
    'tcpSocket: {port: 80800}',
    'tcpSocket',
    'spec.template.spec.containers[0].livenessProbe.tcpSocket.port: must be a port number between 1 and 65535, got 80800',
  ],
  [
    'a probe port name that is no IANA service name',
    'port: http, scheme',
    'port: http_main, scheme',
    'port: http_main',
    'spec.template.spec.containers[0].readinessProbe.httpGet.port: must be a port number or a port name (a port name must consist of lowercase letters, digits and "-"), got "http_main"',
  ],
  [
    'a gRPC probe on a named port',
    'grpc: {port: 9091}',
    'grpc: {port: grpc}',
    'grpc: {port: grpc}',
    'spec.template.spec.containers[0].startupProbe.grpc.port: must be an integer, got "grpc"',
  ],
  [
    'an HTTP probe scheme that is not HTTP or HTTPS',
    'scheme: HTTP,',
    'scheme: TCP,',
    'scheme: TCP',
    'spec.template.spec.containers[0].readinessProbe.httpGet.scheme: must be "HTTP" or "HTTPS", got "TCP"',
  ],
  [
    'an HTTP header name with a space',
    'name: X-Probe',
    'name: X Probe',
    'X Probe',
    'spec.template.spec.containers[0].readinessProbe.httpGet.httpHeaders[0].name: must be an HTTP header name: letters, digits and !#$%&\'*+-.^_`|~, got "X Probe"',
  ],
  [
    'a negative failureThreshold',
    'failureThreshold: 3\n',
    'failureThreshold: -1\n',
    'failureThreshold: -1',
    'spec.template.spec.containers[0].readinessProbe.failureThreshold: must be >= 0, got -1',
  ],
  [
    'a liveness probe that asks for several successes',
    'initialDelaySeconds: 10',
    'initialDelaySeconds: 10\n            successThreshold: 2',
    'successThreshold: 2',
    'spec.template.spec.containers[0].livenessProbe.successThreshold: must be 1 for a livenessProbe, got 2',
  ],
  [
    'a zero probe terminationGracePeriodSeconds',
    'terminationGracePeriodSeconds: 20',
    'terminationGracePeriodSeconds: 0',
    'terminationGracePeriodSeconds: 0',
    'spec.template.spec.containers[0].livenessProbe.terminationGracePeriodSeconds: must be >= 1, got 0',
  ],
  [
    'a readiness probe with terminationGracePeriodSeconds',
    'periodSeconds: 5',
    'periodSeconds: 5\n            terminationGracePeriodSeconds: 10',
    'terminationGracePeriodSeconds: 10',
    'spec.template.spec.containers[0].readinessProbe.terminationGracePeriodSeconds: must not be set on a readinessProbe',
  ],
  [
    'an exec hook without a command',
    'sleep: {seconds: 5}',
    'exec: {}',
    'exec: {}',
    'spec.template.spec.containers[0].lifecycle.preStop.exec.command: required: the command to run',
  ],
  [
    'a probe on an init container that is not a sidecar',
    'url}}}\n',
    'url}}}\n          livenessProbe: {exec: {command: [true]}}\n',
    'livenessProbe: {exec',
    'spec.template.spec.initContainers[0].livenessProbe: must not be set on an init container (unless it is a sidecar, restartPolicy: Always)',
  ],
  // Ports.
  [
    'a containerPort of 0',
    'containerPort: 9090',
    'containerPort: 0',
    'containerPort: 0',
    'spec.template.spec.containers[0].ports[1].containerPort: must be a port number between 1 and 65535, got 0',
  ],
  [
    'a containerPort written as text',
    'containerPort: 9090',
    'containerPort: "9090"',
    'containerPort: "9090"',
    'spec.template.spec.containers[0].ports[1].containerPort: must be an integer, got "9090"',
  ],
  [
    'a port without containerPort',
    '{name: metrics, containerPort: 9090}',
    '{name: metrics}',
    '{name: metrics}',
    'spec.template.spec.containers[0].ports[1].containerPort: required',
  ],
  [
    'a hostPort out of range',
    'containerPort: 9090}',
    'containerPort: 9090, hostPort: 70000}',
    'hostPort: 70000',
    'spec.template.spec.containers[0].ports[1].hostPort: must be a port number between 1 and 65535 (or 0 for none), got 70000',
  ],
  [
    'one host port taken twice',
    '- {name: http, containerPort: 8080, protocol: TCP}\n            - {name: metrics, containerPort: 9090}',
    '- {name: http, containerPort: 8080, protocol: TCP, hostPort: 80}\n            - {name: metrics, containerPort: 9090, hostPort: 80}',
    'containerPort: 9090, hostPort: 80',
    'spec.template.spec.containers[0].ports[1].hostPort: duplicate host port 80/TCP: spec.template.spec.containers[0].ports[0] takes it already',
  ],
  [
    'a protocol other than TCP, UDP and SCTP',
    'protocol: TCP',
    'protocol: HTTP',
    'protocol: HTTP',
    'spec.template.spec.containers[0].ports[0].protocol: must be one of TCP, UDP, SCTP, got "HTTP"',
  ],
  [
    'a port name longer than 15 characters',
    '{name: metrics,',
    '{name: prometheus-metrics,',
    'prometheus-metrics',
    'spec.template.spec.containers[0].ports[1].name: must be 1 to 15 characters, got "prometheus-metrics"',
  ],
  [
    'a port name of digits only',
    '{name: metrics,',
    '{name: "9090",',
    'name: "9090"',
    'spec.template.spec.containers[0].ports[1].name: must contain at least one letter, got "9090"',
  ],
  [
    'two ports of one name in a container',
    '{name: metrics,',
    '{name: http,',
    '{name: http, containerPort: 9090}',
    'spec.template.spec.containers[0].ports[1].name: duplicate port name "http" in this container (also ports[0])',
  ],
  // Names.
  [
    'a container name with capitals',
    '- name: checkout\n          image: registry.example.com/checkout:1.4.2',
    '- name: Checkout\n          image: registry.example.com/checkout:1.4.2',
    'name: Checkout',
    'spec.template.spec.containers[0].name: must be a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit, got "Checkout"',
  ],
  [
    'a container named like an init container',
    '- name: checkout\n          image: registry.example.com/checkout:1.4.2',
    '- name: migrate # again\n          image: registry.example.com/checkout:1.4.2',
    'name: migrate # again',
    'spec.template.spec.containers[0].name: duplicate container name "migrate" (also initContainers[0])',
  ],
  [
    'a volume name with a dot',
    '- name: cache\n',
    '- name: cache.d\n',
    'name: cache.d',
    'spec.template.spec.volumes[0].name: must be a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit, got "cache.d"',
  ],
  [
    'two volumes of one name',
    '- name: scratch',
    '- name: config # again',
    'name: config # again',
    'spec.template.spec.volumes[2].name: duplicate volume name "config" (also volumes[1])',
  ],
  [
    'a volume with two sources',
    'configMap: {name: checkout-config}\n',
    'configMap: {name: checkout-config}\n          secret: {secretName: checkout}\n',
    '- name: config',
    'spec.template.spec.volumes[1]: must set only one volume source, got secret and configMap',
  ],
  [
    'a mount of a volume the pod does not have',
    '{name: cache, mountPath',
    '{name: caches, mountPath',
    'name: caches',
    'spec.template.spec.containers[0].volumeMounts[0].name: must name one of the pod\'s volumes (cache, config, scratch), got "caches"',
  ],
  [
    'two mounts at one path',
    'mountPath: /etc/checkout',
    'mountPath: /var/cache/checkout',
    'name: config, mountPath: /var/cache/checkout',
    'spec.template.spec.containers[0].volumeMounts[1].mountPath: duplicate mountPath "/var/cache/checkout" in this container (also volumeMounts[0])',
  ],
  [
    'an environment variable name with "="',
    'name: LOG_LEVEL',
    'name: LOG=LEVEL',
    'LOG=LEVEL',
    'spec.template.spec.containers[0].env[3].name: must consist of printable ASCII characters other than "=", got "LOG=LEVEL"',
  ],
  [
    'an environment variable with both value and valueFrom',
    '{name: LOG_LEVEL, value: info}',
    '{name: LOG_LEVEL, value: info, valueFrom: {fieldRef: {fieldPath: metadata.name}}}',
    'LOG_LEVEL',
    'spec.template.spec.containers[0].env[3].valueFrom: must not be set together with value: give one of them',
  ],
  [
    'a downward-API field the environment cannot read',
    'fieldPath: "metadata.labels[\'team\']"',
    'fieldPath: metadata.labels',
    'fieldPath: metadata.labels',
    "spec.template.spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: must be one of metadata.name, metadata.namespace, metadata.uid, spec.nodeName, spec.serviceAccountName, status.hostIP, status.hostIPs, status.podIP, status.podIPs, metadata.labels['<key>'] or metadata.annotations['<key>'], got \"metadata.labels\"",
  ],
  [
    'a Secret key with a slash',
    'key: url',
    'key: db/url',
    'key: db/url',
    'spec.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef.key: must consist of letters, digits, "-", "_" and ".", got "db/url"',
  ],
  // Labels, annotations and what the owner allows.
  [
    'a template label value longer than 63 characters',
    'app.kubernetes.io/version: "1.4.2"',
    `app.kubernetes.io/version: "${'1'.repeat(64)}"`,
    'app.kubernetes.io/version',
    'spec.template.metadata.labels["app.kubernetes.io/version"]: label value must be at most 63 characters, got "111111111111111111111111111111111111111111111111111111111..."',
  ],
  [
    'a template label value with a space',
    'app.kubernetes.io/version: "1.4.2"',
    'app.kubernetes.io/version: "1.4.2 beta"',
    'app.kubernetes.io/version',
    'spec.template.metadata.labels["app.kubernetes.io/version"]: label value must be empty or consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit, got "1.4.2 beta"',
  ],
  [
    'a template label key with two slashes',
    'app.kubernetes.io/version: "1.4.2"',
    'app.kubernetes.io/version/minor: "1.4.2"',
    'app.kubernetes.io/version/minor',
    'spec.template.metadata.labels["app.kubernetes.io/version/minor"]: label key must be a name or prefix/name, with at most one "/" (the prefix a DNS subdomain)',
  ],
  [
    'an annotation key with an uppercase prefix that is no DNS subdomain',
    'prometheus.io/scrape: "true"',
    'prometheus_io/scrape: "true"',
    'prometheus_io/scrape',
    'spec.template.metadata.annotations["prometheus_io/scrape"]: annotation key prefix "prometheus_io" must be a DNS subdomain: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
  ],
  [
    'annotations above 256 KiB together',
    'prometheus.io/scrape: "true"',
    `prometheus.io/scrape: "${'x'.repeat(256 * 1024)}"`,
    'annotations:',
    'spec.template.metadata.annotations: must hold at most 262144 bytes in all (keys and values), got 262164',
  ],
  [
    'a label on the Rollout itself that the API server refuses',
    'metadata:\n  name: checkout\n',
    'metadata:\n  name: checkout\n  labels: {team: payments/eu}\n',
    'team: payments/eu',
    'metadata.labels.team: label value must be empty or consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit, got "payments/eu"',
  ],
  [
    'a restartPolicy other than Always',
    'terminationGracePeriodSeconds: 30',
    'terminationGracePeriodSeconds: 30\n      restartPolicy: OnFailure',
    'restartPolicy: OnFailure',
    'spec.template.spec.restartPolicy: must be "Always" for the pods of a ReplicaSet, got "OnFailure"',
  ],
  [
    'activeDeadlineSeconds on a ReplicaSet pod',
    'terminationGracePeriodSeconds: 30',
    'terminationGracePeriodSeconds: 30\n      activeDeadlineSeconds: 600',
    'activeDeadlineSeconds',
    "spec.template.spec.activeDeadlineSeconds: must not be set: a ReplicaSet's pods run until they are replaced",
  ],
  [
    'ephemeral containers in a template',
    '      volumes:\n',
    '      ephemeralContainers:\n        - {name: debug, image: busybox:1.36}\n      volumes:\n',
    'ephemeralContainers:',
    'spec.template.spec.ephemeralContainers: must not be set in a pod template (ephemeral containers are added to running pods)',
  ],
  [
    'a serviceAccountName that is no DNS subdomain',
    'serviceAccountName: checkout',
    'serviceAccountName: Checkout_SA',
    'serviceAccountName',
    'spec.template.spec.serviceAccountName: must be a DNS subdomain: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, got "Checkout_SA"',
  ],
];

describe('a Rollout whose pod template the API server would refuse', () => {
  it.each(ROLLOUT_FAULTS)('%s', (_name, from, to, faultLine, message) => {
    const text = replaced(ROLLOUT, from, to);
    const { errors } = check(text);
    const line = lineOf(text, faultLine);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\d+:\d+ /);
    expect(errors[0]!.replace(/:\d+ /, ' ')).toBe(`${line} ${message}`);
  });

  it('lets an init container use the host port a container uses later (they do not run together)', () => {
    const text = replaced(
      replaced(
        ROLLOUT,
        '{name: metrics, containerPort: 9090}',
        '{name: metrics, containerPort: 9090, hostPort: 9090}',
      ),
      'image: registry.example.com/checkout-migrate:1.4.2',
      'image: registry.example.com/checkout-migrate:1.4.2\n          ports: [{containerPort: 9090, hostPort: 9090}]',
    );
    expect(check(text).errors).toEqual([]);
  });

  it('warns about an environment variable name older API servers refuse', () => {
    const { errors, warnings } = check(replaced(ROLLOUT, 'name: LOG_LEVEL', 'name: 1LOG.LEVEL'));
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      `${lineOf(ROLLOUT, 'LOG_LEVEL')} spec.template.spec.containers[0].env[3].name: API servers before Kubernetes 1.32 refuse this name (they allow letters, digits, "-", "_" and ".", not starting with a digit), got "1LOG.LEVEL"`,
    ]);
  });
});

describe("a job metric's Job the API server would refuse", () => {
  // The fault's line: a text on it, or its number where a field is missing (reported at its parent's line).
  const JOB_FAULTS: Array<[string, string, string, string | number, string]> = [
    [
      'no restartPolicy (a Job refuses the default, Always)',
      '                restartPolicy: Never\n',
      '',
      20,
      'spec.metrics[0].provider.job.spec.template.spec.restartPolicy: required for a Job: "OnFailure" or "Never" (unset means "Always", which the API server refuses for Jobs)',
    ],
    [
      'restartPolicy Always',
      'restartPolicy: Never',
      'restartPolicy: Always',
      'restartPolicy: Always',
      'spec.metrics[0].provider.job.spec.template.spec.restartPolicy: must be "OnFailure" or "Never" for the pods of a Job, got "Always"',
    ],
    [
      "a memory request that does not parse (Argo's malformed-analysistemplate)",
      'cpu: 100m}',
      'cpu: 100m, ephemeral-storage: invalid}',
      'ephemeral-storage: invalid',
      'spec.metrics[0].provider.job.spec.template.spec.containers[0].resources.requests.ephemeral-storage: invalid quantity "invalid": expected a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, …), e.g. "500m" or "128Mi"',
    ],
    [
      'a negative backoffLimit',
      'backoffLimit: 1',
      'backoffLimit: -1',
      'backoffLimit: -1',
      'spec.metrics[0].provider.job.spec.backoffLimit: must be >= 0, got -1',
    ],
    [
      'a Job label value with a space',
      'purpose: smoke-test',
      'purpose: smoke test',
      'purpose: smoke test',
      'spec.metrics[0].provider.job.metadata.labels.purpose: label value must be empty or consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit, got "smoke test"',
    ],
    [
      'a container without an image',
      '                    image: "{{args.image}}"\n',
      '',
      23,
      'spec.metrics[0].provider.job.spec.template.spec.containers[0].image: required',
    ],
    [
      'no template',
      'template:\n              metadata:\n                labels: {job: "{{args.image}}"}\n              spec:',
      'x-template:\n              spec:',
      15,
      'spec.metrics[0].provider.job.spec.template: required',
    ],
  ];

  it.each(JOB_FAULTS)('%s', (_name, from, to, faultLine, message) => {
    const text = replaced(TEMPLATE, from, to);
    const { errors } = check(text);
    const line = typeof faultLine === 'number' ? faultLine : lineOf(text, faultLine);
    expect(errors.map((e) => e.replace(/:\d+ /, ' '))).toEqual([`${line} ${message}`]);
  });
});
