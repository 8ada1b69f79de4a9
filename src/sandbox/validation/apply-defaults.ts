// Defaulting for built-in kinds: the fields kube-apiserver fills in on write, so live objects look real.
import type { ResourceType } from '../resources/resource-type.ts';
import type { SeededRandom } from '../random/seeded-random.ts';
import { typeKeyOf, type StoredObject } from '../store/object-store.ts';

function rec(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function defaultContainer(c: unknown): void {
  const container = rec(c);
  if (!container) return;
  const image = typeof container.image === 'string' ? container.image : '';
  const tag = image.includes('@') ? 'digest' : (image.split('/').pop() ?? '').split(':')[1];
  container.imagePullPolicy ??= tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
  container.terminationMessagePath ??= '/dev/termination-log';
  container.terminationMessagePolicy ??= 'File';
  container.resources ??= {};
  if (Array.isArray(container.ports)) {
    for (const p of container.ports) {
      const port = rec(p);
      if (port) port.protocol ??= 'TCP';
    }
  }
}

/** PodSpec defaults (restartPolicy, dnsPolicy, schedulerName, grace period, container defaults). */
export function defaultPodSpec(spec: unknown, restartPolicy = 'Always'): void {
  const s = rec(spec);
  if (!s) return;
  s.restartPolicy ??= restartPolicy;
  s.dnsPolicy ??= 'ClusterFirst';
  s.schedulerName ??= 'default-scheduler';
  s.terminationGracePeriodSeconds ??= 30;
  s.securityContext ??= {};
  for (const field of ['containers', 'initContainers']) {
    const list = s[field];
    if (Array.isArray(list)) list.forEach(defaultContainer);
  }
}

function defaultTemplate(spec: Record<string, unknown>, restartPolicy?: string): void {
  const template = rec(spec.template);
  if (!template) return;
  template.metadata ??= {};
  defaultPodSpec(template.spec, restartPolicy);
}

/**
 * Fills the defaults the real API server would for the kinds the sandbox validates (on create and on
 * every update, as defaulting runs on decode). `random` picks a ClusterIP for new Services; pods land
 * on `nodeName` (the sandbox's one node) since there is no scheduler.
 */
export function applyDefaults(
  type: ResourceType,
  obj: StoredObject,
  random: SeededRandom,
  nodeName: string,
): void {
  const spec = rec(obj.spec);
  switch (typeKeyOf(type)) {
    case '/Pod':
      if (spec) {
        defaultPodSpec(spec);
        spec.nodeName ??= nodeName;
        spec.enableServiceLinks ??= true;
      }
      break;
    case 'apps/ReplicaSet':
      if (spec) {
        spec.replicas ??= 1;
        defaultTemplate(spec);
      }
      break;
    case 'apps/Deployment':
      if (spec) {
        spec.replicas ??= 1;
        spec.revisionHistoryLimit ??= 10;
        spec.progressDeadlineSeconds ??= 600;
        spec.strategy ??= {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
        };
        defaultTemplate(spec);
      }
      break;
    case 'batch/Job':
      if (spec) {
        spec.backoffLimit ??= 6;
        spec.completionMode ??= 'NonIndexed';
        spec.suspend ??= false;
        if (spec.completions === undefined && spec.parallelism === undefined) {
          spec.completions = 1;
          spec.parallelism = 1;
        }
        spec.parallelism ??= 1;
        defaultTemplate(spec);
      }
      break;
    case '/Secret': {
      // stringData is write-only: the API server folds it into data (base64, its keys winning) on every write.
      const stringData = rec(obj.stringData);
      if (stringData) {
        const data = rec(obj.data) ?? {};
        for (const [key, value] of Object.entries(stringData))
          if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
        obj.data = data;
        delete obj.stringData;
      }
      if (typeof obj.type !== 'string' || obj.type === '') obj.type = 'Opaque';
      break;
    }
    case '/Service':
      if (spec) {
        spec.type ??= 'ClusterIP';
        spec.sessionAffinity ??= 'None';
        if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
          const ip = `10.96.${Math.floor(random.next() * 255)}.${1 + Math.floor(random.next() * 253)}`;
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
        spec.internalTrafficPolicy ??= 'Cluster';
        if (Array.isArray(spec.ports)) {
          for (const p of spec.ports) {
            const port = rec(p);
            if (!port) continue;
            port.protocol ??= 'TCP';
            port.targetPort ??= port.port;
          }
        }
      }
      break;
    default:
      break;
  }
}
