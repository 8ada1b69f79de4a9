// deploy/ rendered by the real kubectl kustomize: what each install contains, its security settings, no
// inline secrets, and an RBAC role that allows every API request the code makes and nothing it does not.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/index.ts';
import { NOTIFICATION_CONFIGMAP, NOTIFICATION_SECRET } from '../../../src/notify/notification-config.ts';
import { TRAFFIC_PROVIDERS } from '../../../src/traffic/traffic-providers.ts';
import {
  controllerRequests,
  SIGN_IN_REQUESTS,
  syncRequests,
  type ApiRequest,
} from './api-requests-in-code.ts';
import {
  INSTALLS,
  groupOf,
  kustomize,
  parseRendered,
  renderInstall,
  type InstallName,
  type RenderedObject,
} from './rendered-install.ts';

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string> };
  securityContext?: {
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  volumes?: { name: string; emptyDir?: object; configMap?: { name: string } }[];
}

const renders = {} as Record<InstallName, RenderedObject[]>;
const CRD_FILES = readdirSync('deploy/crds').filter((f) => f.endsWith('.rollgate.dev.yaml'));

const ofKind = (objects: RenderedObject[], kind: string): RenderedObject[] =>
  objects.filter((o) => o.kind === kind);
const named = (objects: RenderedObject[], kind: string, name: string): RenderedObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
};
const podSpecOf = (deployment: RenderedObject): PodSpec =>
  (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const rulesOf = (role: RenderedObject): PolicyRule[] => (role as unknown as { rules: PolicyRule[] }).rules;
const rollgateDeployments = (objects: RenderedObject[]): RenderedObject[] =>
  ofKind(objects, 'Deployment').filter((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'rollgate');

/** The rules bound to ServiceAccount rollgate-system/rollgate, with the namespace a Role limits them to. */
function serviceAccountRules(objects: RenderedObject[]): { namespace?: string; rule: PolicyRule }[] {
  const bindsRollgate = (binding: RenderedObject): boolean =>
    (
      (binding as unknown as { subjects?: { kind: string; name: string; namespace?: string }[] }).subjects ??
      []
    ).some((s) => s.kind === 'ServiceAccount' && s.name === 'rollgate' && s.namespace === 'rollgate-system');
  const roleRefOf = (binding: RenderedObject): { kind: string; name: string } =>
    (binding as unknown as { roleRef: { kind: string; name: string } }).roleRef;
  const rules: { namespace?: string; rule: PolicyRule }[] = [];
  for (const binding of ofKind(objects, 'ClusterRoleBinding').filter(bindsRollgate))
    for (const rule of rulesOf(named(objects, 'ClusterRole', roleRefOf(binding).name))) rules.push({ rule });
  for (const binding of ofKind(objects, 'RoleBinding').filter(bindsRollgate)) {
    const ref = roleRefOf(binding);
    const role =
      ref.kind === 'Role'
        ? objects.find(
            (o) =>
              o.kind === 'Role' &&
              o.metadata.name === ref.name &&
              o.metadata.namespace === binding.metadata.namespace,
          )
        : named(objects, 'ClusterRole', ref.name);
    if (!role)
      throw new Error(`RoleBinding ${binding.metadata.name} names a missing ${ref.kind} ${ref.name}`);
    for (const rule of rulesOf(role)) rules.push({ namespace: binding.metadata.namespace!, rule });
  }
  return rules;
}

const allows = (rule: PolicyRule, request: Pick<ApiRequest, 'group' | 'resource' | 'verb'>): boolean =>
  (rule.apiGroups ?? []).includes(request.group) &&
  (rule.resources ?? []).includes(request.resource) &&
  rule.verbs.includes(request.verb);

/** Granted although no API call asks for it: the OwnerReferencesPermissionEnforcement admission plugin
 * wants update on the owner's finalizers for every object created with blockOwnerDeletion. */
const GRANTED_FOR_ADMISSION = [
  { group: 'rollgate.dev', resource: 'rollouts/finalizers', verb: 'update' },
  { group: 'rollgate.dev', resource: 'analysisruns/finalizers', verb: 'update' },
  { group: 'rollgate.dev', resource: 'experiments/finalizers', verb: 'update' },
];
/** Asked for by the code but deliberately not granted: the install creates rollgate-system itself, so the
 * source state store's create-namespace-if-missing never runs (it reads the namespace first). */
const NOT_GRANTED = [
  { group: '', resource: 'namespaces', verb: 'create' },
  // Dashboard sign-in's rights: only with the component deploy/components/dashboard-sign-in.
  ...SIGN_IN_REQUESTS,
  // Argo CD cluster Secrets: listed only with clusterSecrets.enabled and the opt-in Role of
  // deploy/cluster-secrets, in that one namespace; never every Secret of the cluster.
  { group: '', resource: 'secrets', verb: 'list' },
];

/**
 * What the namespaced install leaves out, being cluster-scoped: the CRD install at start (its Deployment
 * turns kubernetes.installCrds off) and ClusterAnalysisTemplates (docs/install.md says to use namespaced
 * AnalysisTemplates there).
 */
const NOT_NAMESPACED = [
  ...['get', 'create', 'patch'].map((verb) => ({
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    verb,
  })),
  { group: 'rollgate.dev', resource: 'clusteranalysistemplates', verb: 'get' },
  // The Argo Rollouts controller's Lease, read only when a process drives argoproj.io (controller mode,
  // a cluster-wide install: docs/controller-mode.md); it lives in Argo's namespace, not the install's.
  { group: 'coordination.k8s.io', resource: 'leases', verb: 'get' },
];

const key = (r: Pick<ApiRequest, 'group' | 'resource' | 'verb'>): string =>
  `${r.group || 'core'} ${r.resource} ${r.verb}`;

beforeAll(async () => {
  for (const name of Object.keys(INSTALLS) as InstallName[]) renders[name] = await renderInstall(name);
});

describe('kubectl kustomize deploy/', () => {
  it('renders the whole all-in-one install into rollgate-system', () => {
    const objects = renders.base;
    expect(named(objects, 'Namespace', 'rollgate-system')).toBeDefined();
    expect(
      ofKind(objects, 'CustomResourceDefinition')
        .map((c) => `${c.metadata.name}.yaml`)
        .sort(),
    ).toEqual(CRD_FILES.sort());
    for (const [kind, name] of [
      ['ServiceAccount', 'rollgate'],
      ['ClusterRole', 'rollgate'],
      ['ClusterRoleBinding', 'rollgate'],
      ['Role', 'rollgate-state'],
      ['RoleBinding', 'rollgate-state'],
      ['ConfigMap', 'rollgate-config'],
      ['Deployment', 'rollgate'],
      ['Service', 'rollgate'],
      ['PodDisruptionBudget', 'rollgate'],
    ] as const)
      expect(named(objects, kind, name).metadata.namespace ?? '(cluster)').toBe(
        ['ClusterRole', 'ClusterRoleBinding'].includes(kind) ? '(cluster)' : 'rollgate-system',
      );
    const container = podSpecOf(named(objects, 'Deployment', 'rollgate')).containers[0]!;
    expect(container.image).toBe('ghcr.io/rollgate/rollgate:0.1.0');
    expect(container.args?.[0]).toBe('run');
  });

  it('can be uninstalled without the CRDs: the namespace plus the labelled cluster-scoped roles', () => {
    // docs/install.md: `kubectl delete namespace rollgate-system` and
    // `kubectl delete clusterrole,clusterrolebinding -l app.kubernetes.io/part-of=rollgate`.
    for (const install of Object.keys(INSTALLS) as InstallName[]) {
      const left = renders[install].filter((o) => {
        if (o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition') return false;
        if (o.metadata.namespace === 'rollgate-system') return false;
        const clusterRbac = o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding';
        return !(clusterRbac && o.metadata.labels?.['app.kubernetes.io/part-of'] === 'rollgate');
      });
      expect(left.map((o) => `${install}: ${o.kind} ${o.metadata.name}`)).toEqual([]);
    }
  });

  it('lists every generated CRD in deploy/crds/kustomization.yaml', () => {
    const listed = (parse(readFileSync('deploy/crds/kustomization.yaml', 'utf8')) as { resources: string[] })
      .resources;
    expect([...listed].sort()).toEqual([...CRD_FILES].sort());
  });

  it('ships the roles for people, aggregated into view, edit and admin', () => {
    const labelOf = (name: string): Record<string, string> =>
      named(renders.base, 'ClusterRole', name).metadata.labels ?? {};
    expect(labelOf('rollgate-view')['rbac.authorization.k8s.io/aggregate-to-view']).toBe('true');
    expect(labelOf('rollgate-edit')['rbac.authorization.k8s.io/aggregate-to-edit']).toBe('true');
    expect(labelOf('rollgate-admin')['rbac.authorization.k8s.io/aggregate-to-admin']).toBe('true');
    const edit = rulesOf(named(renders.base, 'ClusterRole', 'rollgate-edit'));
    // The CLI's pause / promote / abort patch the Rollout and its status with the user's credentials.
    expect(
      edit.some((r) => allows(r, { group: 'rollgate.dev', resource: 'rollouts/status', verb: 'patch' })),
    ).toBe(true);
    const view = rulesOf(named(renders.base, 'ClusterRole', 'rollgate-view'));
    expect(view.flatMap((r) => r.verbs).sort()).toEqual(['get', 'list', 'watch']);
  });

  it('split runs a poller, which takes the webhooks, and a reconciler', () => {
    const deployments = rollgateDeployments(renders.split);
    const roleOf = (d: RenderedObject): string | undefined => podSpecOf(d).containers[0]!.args?.[0];
    expect(deployments.map((d) => `${d.metadata.name}:${roleOf(d)}`).sort()).toEqual([
      'rollgate-poller:poller',
      'rollgate-reconciler:reconciler',
    ]);
    const selector = (
      named(renders.split, 'Service', 'rollgate') as unknown as { spec: { selector: Record<string, string> } }
    ).spec.selector;
    const podLabels = (d: RenderedObject): Record<string, string> =>
      (d as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec.template
        .metadata.labels;
    const served = deployments.filter((d) =>
      Object.entries(selector).every(([k, v]) => podLabels(d)[k] === v),
    );
    expect(served.map((d) => d.metadata.name)).toEqual(['rollgate-poller']);
  });

  it('with-redis runs one Redis at the address the configuration names', () => {
    const redis = named(renders['with-redis'], 'Service', 'rollgate-redis');
    expect(redis.metadata.namespace).toBe('rollgate-system');
    expect(
      ofKind(renders['with-redis'], 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['rollgate', 'rollgate-redis']);
    expect(configOf(renders['with-redis']).redis.url).toBe('redis://rollgate-redis:6379');
  });

  describe.each(Object.keys(INSTALLS) as InstallName[])('%s', (install) => {
    it('runs every container as non-root with a read-only root filesystem and resource requests', () => {
      const deployments = ofKind(renders[install], 'Deployment');
      expect(deployments.length).toBeGreaterThan(0);
      for (const deployment of deployments) {
        const pod = podSpecOf(deployment);
        expect(pod.securityContext?.runAsNonRoot, deployment.metadata.name).toBe(true);
        for (const container of pod.containers) {
          expect(container.securityContext, `${deployment.metadata.name}/${container.name}`).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
          expect(Object.keys(container.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
        }
      }
    });

    it('names the protocol of every port (kube-apiserver 1.20 refuses server-side apply without it)', () => {
      const ports: Array<{ where: string; protocol?: string }> = [];
      for (const service of ofKind(renders[install], 'Service'))
        for (const port of (service as unknown as { spec: { ports: Array<{ protocol?: string }> } }).spec
          .ports)
          ports.push({ where: `Service ${service.metadata.name}`, protocol: port.protocol });
      for (const deployment of ofKind(renders[install], 'Deployment'))
        for (const container of podSpecOf(deployment).containers)
          for (const port of (container as { ports?: Array<{ protocol?: string }> }).ports ?? [])
            ports.push({ where: `${deployment.metadata.name}/${container.name}`, protocol: port.protocol });
      expect(ports.length).toBeGreaterThan(0);
      expect(ports.filter((p) => p.protocol === undefined).map((p) => p.where)).toEqual([]);
    });

    it('probes Rollgate on /healthz and /readyz and gives the Git cache a writable emptyDir', () => {
      const cacheDir = configOf(renders[install]).git.cacheDir;
      for (const deployment of rollgateDeployments(renders[install])) {
        const pod = podSpecOf(deployment);
        const container = pod.containers[0]!;
        expect(pod.serviceAccountName).toBe('rollgate');
        expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
        const mount = container.volumeMounts?.find((m) => cacheDir.startsWith(`${m.mountPath}/`));
        expect(mount, `a mount holding ${cacheDir}`).toBeDefined();
        expect(pod.volumes?.find((v) => v.name === mount!.name)?.emptyDir).toBeDefined();
      }
    });

    it('holds no secret value: no Secret object, no inline secret in the configuration or the env', () => {
      expect(ofKind(renders[install], 'Secret')).toEqual([]);
      const text = (
        named(renders[install], 'ConfigMap', 'rollgate-config') as unknown as { data: Record<string, string> }
      ).data['rollgate.yaml']!;
      const config = parse(text) as Record<string, unknown>;
      const inline: string[] = [];
      const walk = (value: unknown, path: string): void => {
        if (value === null || typeof value !== 'object') return;
        for (const [k, v] of Object.entries(value)) {
          if (['secret', 'token', 'password'].includes(k)) inline.push(`${path}.${k}`);
          walk(v, `${path}.${k}`);
        }
      };
      walk(config, '');
      expect(inline).toEqual([]);
      expect(configOf(renders[install]).redis.url).not.toMatch(/\/\/[^/]*@/);
      for (const deployment of ofKind(renders[install], 'Deployment'))
        for (const container of podSpecOf(deployment).containers)
          for (const env of container.env ?? [])
            // A `_FILE` variable names where a mounted Secret is (redis.passwordFile in with-redis).
            if (/SECRET|TOKEN|PASSWORD|REDIS_URL/i.test(env.name) && !env.name.endsWith('_FILE'))
              expect(env.value, env.name).toBeUndefined();
    });
  });
});

let configDir: string;
beforeAll(() => {
  configDir = mkdtempSync(join(tmpdir(), 'rollgate-install-config-'));
});
afterAll(() => rmSync(configDir, { recursive: true, force: true }));

/** The shipped configuration as Rollgate itself loads it (so it must be valid), without the env. */
function configOf(objects: RenderedObject[]): ReturnType<typeof loadConfig> {
  return loadConfig({ file: writeConfig(objects), env: {} });
}

/** The shipped rollgate.yaml, written to a file. */
function writeConfig(objects: RenderedObject[]): string {
  const data = (named(objects, 'ConfigMap', 'rollgate-config') as unknown as { data: Record<string, string> })
    .data;
  const file = join(configDir, 'rollgate.yaml');
  writeFileSync(file, data['rollgate.yaml']!);
  return file;
}

describe("the ClusterRole is the code's API requests, no more, no fewer", () => {
  const requests = [...controllerRequests(), ...syncRequests()];

  it('finds the requests in the code (reconcile, analysis, events, CRDs, sync)', () => {
    const keys = new Set(requests.map(key));
    for (const expected of [
      'rollgate.dev rollouts watch',
      'rollgate.dev rollouts/status update',
      'rollgate.dev analysisruns create',
      'rollgate.dev analysistemplates get',
      'rollgate.dev clusteranalysistemplates get',
      'apps replicasets create',
      'apps replicasets watch',
      'core pods list',
      'core pods patch',
      'core pods/eviction create',
      'core services patch',
      'core events create',
      'batch jobs create',
      'core secrets get',
      'apiextensions.k8s.io customresourcedefinitions patch',
      'core configmaps update',
      'core serviceaccounts impersonate',
      'core users impersonate',
      'core groups impersonate',
      'authorization.k8s.io subjectaccessreviews create',
    ])
      expect(keys, expected).toContain(expected);
  });

  it.each(Object.keys(INSTALLS) as InstallName[])('%s: allows every request the code makes', (install) => {
    const rules = serviceAccountRules(renders[install]);
    const notGranted = new Set(
      [...NOT_GRANTED, ...(install === 'namespaced' ? NOT_NAMESPACED : [])].map(key),
    );
    const refused = requests
      .filter((r) => !notGranted.has(key(r)))
      .filter((r) => !rules.some(({ rule }) => allows(rule, r)))
      .map((r) => `${key(r)} (${r.where})`);
    expect([...new Set(refused)]).toEqual([]);
    for (const r of NOT_GRANTED)
      expect(
        rules.some(({ rule }) => allows(rule, r)),
        key(r),
      ).toBe(false);
  });

  it.each(['base', 'namespaced'] as const)('%s: grants nothing the code does not ask for', (install) => {
    const asked = new Set([...requests, ...GRANTED_FOR_ADMISSION].map(key));
    const unused = serviceAccountRules(renders[install]).flatMap(({ rule }) =>
      (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).flatMap((resource) =>
          rule.verbs.map((verb) => key({ group, resource, verb })).filter((k) => !asked.has(k)),
        ),
      ),
    );
    expect(unused).toEqual([]);
  });

  it('dashboard sign-in: the component grants exactly what sign-in asks for, cluster-wide, to the ServiceAccount', async () => {
    const mine = mkdtempSync(join(tmpdir(), 'rollgate-sign-in-'));
    try {
      const base = relative(mine, resolve(INSTALLS.base));
      const component = relative(mine, resolve('deploy/components/dashboard-sign-in'));
      writeFileSync(join(mine, 'kustomization.yaml'), `resources: [${base}]\ncomponents: [${component}]\n`);
      const objects = parseRendered(await kustomize(mine));
      const withSignIn = serviceAccountRules(objects);
      for (const r of SIGN_IN_REQUESTS)
        expect(
          withSignIn.some(({ rule, namespace }) => namespace === undefined && allows(rule, r)),
          key(r),
        ).toBe(true);
      const granted = rulesOf(named(objects, 'ClusterRole', 'rollgate-dashboard-sign-in')).flatMap((rule) =>
        (rule.apiGroups ?? []).flatMap((group) =>
          (rule.resources ?? []).flatMap((resource) =>
            rule.verbs.map((verb) => key({ group, resource, verb })),
          ),
        ),
      );
      expect(granted.sort()).toEqual(SIGN_IN_REQUESTS.map(key).sort());
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  });

  it('keeps writes to the state ConfigMap inside rollgate-system, and CRD writes to our CRDs', () => {
    const rules = serviceAccountRules(renders.base);
    const updatesConfigMaps = rules.filter(({ rule }) =>
      allows(rule, { group: '', resource: 'configmaps', verb: 'update' }),
    );
    expect(updatesConfigMaps.map((r) => r.namespace)).toEqual(['rollgate-system']);
    const crdRules = rules.filter(({ rule }) => rule.apiGroups?.includes('apiextensions.k8s.io'));
    expect(crdRules.map(({ rule }) => [...(rule.resourceNames ?? [])].sort())).toEqual([
      ofKind(renders.base, 'CustomResourceDefinition')
        .map((c) => c.metadata.name)
        .sort(),
    ]);
    expect(
      rules.every(({ rule }) => !(rule.resources ?? []).includes('*') && !rule.verbs.includes('*')),
    ).toBe(true);
  });

  it('namespaced: grants through Roles in rollgate-system only, and the processes look nowhere else', () => {
    const objects = renders.namespaced;
    expect(objects.filter((o) => o.metadata.namespace === undefined).map((o) => o.kind)).toEqual([]);
    const rules = serviceAccountRules(objects);
    expect(rules.length).toBeGreaterThan(0);
    expect(new Set(rules.map((r) => r.namespace))).toEqual(new Set(['rollgate-system']));
    for (const r of NOT_NAMESPACED)
      expect(
        rules.some(({ rule }) => allows(rule, r)),
        key(r),
      ).toBe(false);
    // Each Deployment points every list, watch and the state store at its own namespace, and skips the CRDs.
    for (const deployment of rollgateDeployments(objects)) {
      const env = new Map(
        (podSpecOf(deployment).containers[0]!.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]),
      );
      const ownNamespace = { fieldRef: { fieldPath: 'metadata.namespace' } };
      expect(Object.fromEntries(env)).toEqual({
        ROLLGATE_KUBERNETES_WATCH_NAMESPACE: ownNamespace,
        ROLLGATE_KUBERNETES_STATE_NAMESPACE: ownNamespace,
        ROLLGATE_KUBERNETES_DEFAULT_NAMESPACE: ownNamespace,
        ROLLGATE_KUBERNETES_INSTALL_CRDS: 'false',
      });
      const config = loadConfig({
        file: writeConfig(objects),
        env: { ROLLGATE_KUBERNETES_INSTALL_CRDS: String(env.get('ROLLGATE_KUBERNETES_INSTALL_CRDS')) },
      });
      expect(config.kubernetes.installCrds).toBe(false);
    }
  });

  it('namespaced: an overlay with `namespace: team-a` moves everything, bindings included', async () => {
    const mine = mkdtempSync(join(tmpdir(), 'rollgate-team-a-'));
    try {
      const overlay = relative(mine, resolve(INSTALLS.namespaced));
      writeFileSync(join(mine, 'kustomization.yaml'), `resources: [${overlay}]\nnamespace: team-a\n`);
      const objects = parseRendered(await kustomize(mine));
      expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set(['team-a']));
      // Each binding still binds the install's own ServiceAccount to a Role rendered next to it.
      const bindings = ofKind(objects, 'RoleBinding') as unknown as Array<{
        subjects: unknown[];
        roleRef: { kind: string; name: string };
      }>;
      expect(bindings).toHaveLength(ofKind(renders.namespaced, 'RoleBinding').length);
      for (const binding of bindings) {
        expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'rollgate', namespace: 'team-a' }]);
        expect(named(objects, binding.roleRef.kind, binding.roleRef.name).metadata.namespace).toBe('team-a');
      }
      // The configuration file keeps the base's stateNamespace: the Deployment's environment overrides it
      // with the pod's namespace (checked above), so only the ConfigMap may still name rollgate-system.
      expect(JSON.stringify(objects.filter((o) => o.kind !== 'ConfigMap'))).not.toContain('rollgate-system');
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  });

  it('lets the state Role read the notification ConfigMap and Secret, and the Secrets (notification, Datadog, New Relic, Wavefront) by name only', () => {
    const reads = requests.filter((r) => r.where === 'src/kube/notification-config-reader.ts').map(key);
    expect(reads.sort()).toEqual(['core configmaps get', 'core secrets get']);
    const stateRules = serviceAccountRules(renders.base).filter((r) => r.namespace === 'rollgate-system');
    expect(
      stateRules.some(({ rule }) => allows(rule, { group: '', resource: 'configmaps', verb: 'get' })),
    ).toBe(true);
    const secretRules = stateRules.filter(({ rule }) =>
      allows(rule, { group: '', resource: 'secrets', verb: 'get' }),
    );
    expect(secretRules.map(({ rule }) => rule.resourceNames)).toEqual([
      [NOTIFICATION_SECRET, 'datadog', 'newrelic', 'influxdb', 'wavefront-api-tokens'],
    ]);
    expect(NOTIFICATION_CONFIGMAP).toBe('rollgate-notification-configmap');
  });

  it('base: no cluster-wide rule reads Secrets; a team grants named Secrets in its namespace (issue 26)', async () => {
    const secretGet = { group: '', resource: 'secrets', verb: 'get' };
    const granted = serviceAccountRules(renders.base).filter(({ rule }) => allows(rule, secretGet));
    // Before issue 26 the ClusterRole let Rollgate read every Secret of the cluster.
    expect(granted.map((r) => r.namespace)).toEqual(['rollgate-system']);
    expect(granted.map(({ rule }) => rule.resourceNames)).toEqual([
      [NOTIFICATION_SECRET, 'datadog', 'newrelic', 'influxdb', 'wavefront-api-tokens'],
    ]);
    // The example a team applies: get on the Secrets it names, in its own namespace, for Rollgate alone.
    const example = parseRendered(await kustomize('deploy/analysis-secrets'));
    const teamRules = serviceAccountRules(example);
    expect(teamRules.map((r) => r.namespace)).toEqual(['team-a']);
    expect(teamRules.map(({ rule }) => [rule.verbs, rule.resources, rule.resourceNames])).toEqual([
      [['get'], ['secrets'], ['health-api-token']],
    ]);
  });

  it('edit and admin only read ClusterAnalysisTemplates (one is used by every namespace)', () => {
    for (const name of ['rollgate-edit', 'rollgate-admin']) {
      const rules = rulesOf(named(renders.base, 'ClusterRole', name));
      const writes = ['create', 'update', 'patch', 'delete'].filter((verb) =>
        rules.some((r) => allows(r, { group: 'rollgate.dev', resource: 'clusteranalysistemplates', verb })),
      );
      expect(writes, name).toEqual([]);
    }
  });

  it('names only groups the install, Kubernetes or a supported traffic router serves', () => {
    const routerGroups = TRAFFIC_PROVIDERS.flatMap((p) =>
      p.resources.flatMap((r) => [r.group, ...(r.alsoServedAs ?? []).map((also) => also.group)]),
    );
    const groups = new Set(serviceAccountRules(renders.base).flatMap(({ rule }) => rule.apiGroups ?? []));
    const crdGroups = ofKind(renders.base, 'CustomResourceDefinition').map((c) =>
      groupOf(`${(c as unknown as { spec: { group: string } }).spec.group}/v1`),
    );
    for (const group of groups)
      expect([
        '',
        'apps',
        'batch',
        'apiextensions.k8s.io',
        // The start's check for Argo Rollouts' controller Lease (src/process/argo-rollouts-presence.ts).
        'coordination.k8s.io',
        ...crdGroups,
        ...routerGroups,
      ]).toContain(group);
  });
});
