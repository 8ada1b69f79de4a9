// The upstream traffic-router CRDs (Gateway API, Istio, SMI, Traefik) installed with the real kubectl, and their
// custom resources pruned, defaulted and validated by the sandbox as kube-apiserver does.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

// Every test here reads the upstream CRDs: without them the file skips whole, hooks included.
const crds = upstreamCorpus('crds', import.meta.filename);
const CORPUS = crds.folder;
const run = promisify(execFile);
let dir: string;
let kubeconfig: string;
let sandbox: Sandbox;
let custom: CustomObjectsApi;

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
    timeout: 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await kubectl(...args);
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
  throw new Error(`kubectl ${args.join(' ')} succeeded but was expected to fail`);
}

function manifest(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The Status body of a refused client-node call. */
async function refusal(call: Promise<unknown>): Promise<{
  code: number;
  reason: string;
  message: string;
  details?: { causes?: Array<{ reason: string; message: string; field: string }> };
}> {
  try {
    await call;
  } catch (err) {
    return JSON.parse(String((err as { body?: unknown }).body)) as never;
  }
  throw new Error('the write was accepted but should have been refused');
}

const routes = {
  group: 'gateway.networking.k8s.io',
  version: 'v1',
  namespace: 'default',
  plural: 'httproutes',
};

function httpRoute(name: string, backendRefs: unknown[], extra: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: { parentRefs: [{ name: 'gateway' }], rules: [{ backendRefs }], ...extra },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-traffic-crds-'));
  kubeconfig = join(dir, 'sandbox.kubeconfig');
  sandbox = await startSandbox({ readyDelayMs: 50 });
  sandbox.writeKubeconfig(kubeconfig);
  custom = sandbox.kubeConfig.makeApiClient(CustomObjectsApi);
  for (const file of readdirSync(CORPUS)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    await kubectl('apply', '-f', join(CORPUS, file));
  }
  await sandbox.settle();
}, 60_000);

afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(crds.missing)('upstream traffic CRDs in the sandbox', () => {
  it('installs every corpus CRD with kubectl apply and marks each Established', async () => {
    const files = readdirSync(CORPUS).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(11);
    const { stdout } = await kubectl(
      'get',
      'crd',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Established")].status}{"\\n"}{end}',
    );
    for (const file of files) {
      const [group, plural] = file.replace(/\.yaml$/, '').split('_');
      expect(stdout).toContain(`${plural}.${group}=True`);
    }
    // A second apply of the same files changes nothing.
    const again = await kubectl('apply', '-f', join(CORPUS, 'gateway.networking.k8s.io_httproutes.yaml'));
    expect(again.stdout).toContain('httproutes.gateway.networking.k8s.io unchanged');
  });

  it('serves the served versions only, with their scope', async () => {
    const gateway = await kubectl('api-resources', '--api-group=gateway.networking.k8s.io', '--no-headers');
    expect(gateway.stdout).toMatch(
      /gatewayclasses\s+gc\s+gateway\.networking\.k8s\.io\/v1\s+false\s+GatewayClass/,
    );
    expect(gateway.stdout).toMatch(/httproutes\s+gateway\.networking\.k8s\.io\/v1\s+true\s+HTTPRoute/);
    const v1beta1 = JSON.parse(
      (await kubectl('get', '--raw', '/apis/gateway.networking.k8s.io/v1beta1')).stdout,
    ) as {
      resources: Array<{ name: string }>;
    };
    expect(v1beta1.resources.map((r) => r.name)).toEqual(
      expect.arrayContaining(['httproutes', 'httproutes/status', 'referencegrants', 'gateways']),
    );
    expect(v1beta1.resources.map((r) => r.name)).not.toContain('tcproutes');
    // TCPRoute lists v1alpha2 with served: false; SMI serves v1alpha4 only.
    expect(
      await kubectlFails('get', '--raw', '/apis/gateway.networking.k8s.io/v1alpha2/tcproutes'),
    ).toContain('NotFound');
    expect(await kubectlFails('get', '--raw', '/apis/split.smi-spec.io/v1alpha3/trafficsplits')).toContain(
      'NotFound',
    );
    const istio = await kubectl('get', '--raw', '/apis/networking.istio.io');
    expect(JSON.parse(istio.stdout)).toMatchObject({
      versions: expect.arrayContaining([
        expect.objectContaining({ version: 'v1' }),
        expect.objectContaining({ version: 'v1beta1' }),
        expect.objectContaining({ version: 'v1alpha3' }),
      ]),
    });
  });

  it('applies an HTTPRoute and reads it back with the schema defaults, under v1 and v1beta1', async () => {
    await kubectl(
      'apply',
      '-f',
      manifest(
        'route.yaml',
        `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
spec:
  parentRefs:
    - name: gateway
  rules:
    - backendRefs:
        - name: web-stable
          port: 80
        - name: web-canary
          port: 80
          weight: 0
`,
      ),
    );
    const read = JSON.parse((await kubectl('get', 'httproute', 'web', '-o', 'json')).stdout) as {
      spec: unknown;
    };
    expect(read.spec).toEqual({
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gateway' }],
      rules: [
        {
          backendRefs: [
            { group: '', kind: 'Service', name: 'web-stable', port: 80, weight: 1 },
            { group: '', kind: 'Service', name: 'web-canary', port: 80, weight: 0 },
          ],
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        },
      ],
    });
    const beta = JSON.parse(
      (await kubectl('get', 'httproutes.v1beta1.gateway.networking.k8s.io', 'web', '-o', 'json')).stdout,
    ) as { apiVersion: string; spec: unknown };
    expect(beta.apiVersion).toBe('gateway.networking.k8s.io/v1beta1');
    expect(beta.spec).toEqual(read.spec);
  });

  it('applies an Istio VirtualService and DestinationRule and an SMI TrafficSplit', async () => {
    const { stdout } = await kubectl(
      'apply',
      '-f',
      manifest(
        'mesh.yaml',
        `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web}
spec:
  hosts: [web]
  http:
    - name: primary
      match: [{uri: {prefix: /}}]
      route:
        - destination: {host: web, subset: stable}
          weight: 100
        - destination: {host: web, subset: canary}
          weight: 0
---
apiVersion: networking.istio.io/v1beta1
kind: DestinationRule
metadata: {name: web}
spec:
  host: web
  subsets:
    - name: stable
      labels: {rollouts-pod-template-hash: 5d4f8c}
    - name: canary
      labels: {rollouts-pod-template-hash: 7b9c6d}
---
apiVersion: split.smi-spec.io/v1alpha4
kind: TrafficSplit
metadata: {name: web}
spec:
  service: web
  backends:
    - {service: web-stable, weight: 100}
    - {service: web-canary, weight: 0}
`,
      ),
    );
    expect(stdout).toContain('virtualservice.networking.istio.io/web created');
    expect(stdout).toContain('destinationrule.networking.istio.io/web created');
    expect(stdout).toContain('trafficsplit.split.smi-spec.io/web created');
    const weights = await kubectl('get', 'vs', 'web', '-o', 'jsonpath={.spec.http[0].route[*].weight}');
    expect(weights.stdout).toBe('100 0');
    const subsets = await kubectl(
      'get',
      'destinationrules.v1alpha3.networking.istio.io',
      'web',
      '-o',
      'jsonpath={.spec.subsets[1].labels.rollouts-pod-template-hash}',
    );
    expect(subsets.stdout).toBe('7b9c6d');
    const split = await kubectl('get', 'ts', 'web', '-o', 'jsonpath={.spec.backends[*].weight}');
    expect(split.stdout).toBe('100 0');
  });

  it("reads a new Gateway with its schema's status default and prints filtered printer columns", async () => {
    await kubectl(
      'apply',
      '-f',
      manifest(
        'gateway.yaml',
        `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: sandbox
  listeners: [{name: http, port: 80, protocol: HTTP}]
`,
      ),
    );
    const conditions = await kubectl(
      'get',
      'gateway',
      'edge',
      '-o',
      'jsonpath={range .status.conditions[*]}{.type}={.status}/{.message};{end}',
    );
    expect(conditions.stdout).toBe(
      'Accepted=Unknown/Waiting for controller;Programmed=Unknown/Waiting for controller;',
    );
    const listener = await kubectl(
      'get',
      'gateway',
      'edge',
      '-o',
      'jsonpath={.spec.listeners[0].allowedRoutes}',
    );
    expect(JSON.parse(listener.stdout)).toEqual({ namespaces: { from: 'Same' } });
    expect((await kubectl('get', 'gateway', 'edge')).stdout).toMatch(
      /NAME\s+CLASS\s+ADDRESS\s+PROGRAMMED\s+AGE\nedge\s+sandbox\s+Unknown\s+\d+s/,
    );
  });

  it('refuses a weight above the maximum, a wrong type, a missing required field and a bad enum with 422 causes', async () => {
    const status = await refusal(
      custom.createNamespacedCustomObject({
        ...routes,
        body: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { name: 'bad' },
          spec: {
            parentRefs: [{ port: 80 }],
            rules: [
              {
                matches: [{ path: { type: 'Prefix', value: '/' } }],
                backendRefs: [
                  { name: 'web-stable', port: 80, weight: 1000001 },
                  { name: 'web-canary', port: '80' },
                ],
              },
            ],
          },
        },
      }),
    );
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.message).toMatch(/^HTTPRoute\.gateway\.networking\.k8s\.io "bad" is invalid: \[/);
    expect(status.details?.causes).toEqual(
      expect.arrayContaining([
        {
          reason: 'FieldValueInvalid',
          message:
            'Invalid value: 1000001: spec.rules[0].backendRefs[0].weight in body should be less than or equal to 1e+06',
          field: 'spec.rules[0].backendRefs[0].weight',
        },
        {
          reason: 'FieldValueTypeInvalid',
          message:
            'Invalid value: "string": spec.rules[0].backendRefs[1].port in body must be of type integer: "string"',
          field: 'spec.rules[0].backendRefs[1].port',
        },
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.parentRefs[0].name' },
        {
          reason: 'FieldValueNotSupported',
          message:
            'Unsupported value: "Prefix": supported values: "Exact", "PathPrefix", "RegularExpression"',
          field: 'spec.rules[0].matches[0].path.type',
        },
      ]),
    );
    expect(status.details?.causes).toHaveLength(4);
    expect(await kubectlFails('get', 'httproute', 'bad')).toContain('NotFound');

    const split = await refusal(
      custom.createNamespacedCustomObject({
        group: 'split.smi-spec.io',
        version: 'v1alpha4',
        namespace: 'default',
        plural: 'trafficsplits',
        body: {
          apiVersion: 'split.smi-spec.io/v1alpha4',
          kind: 'TrafficSplit',
          metadata: { name: 'no-service' },
          spec: { backends: [{ service: 'web-stable', weight: 100 }] },
        },
      }),
    );
    expect(split.message).toBe(
      'TrafficSplit.split.smi-spec.io "no-service" is invalid: spec.service: Required value',
    );
  });

  it('evaluates the CEL rules it can: a Service backendRef without a port, a timeout under 1ms', async () => {
    const route = await refusal(
      custom.createNamespacedCustomObject({
        ...routes,
        body: httpRoute('portless', [{ name: 'web-canary' }]),
      }),
    );
    expect(route.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "object": Must have port for Service reference',
        field: 'spec.rules[0].backendRefs[0]',
      },
    ]);
    const stderr = await kubectlFails(
      'apply',
      '-f',
      manifest(
        'timeout.yaml',
        `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: hasty}
spec:
  hosts: [web]
  http:
    - route: [{destination: {host: web}}]
      timeout: 500us
`,
      ),
    );
    expect(stderr).toContain(
      'spec.http[0].timeout: Invalid value: "string": must be a valid duration greater than 1ms',
    );
  });

  it('refuses a custom resource whose name is not a DNS subdomain', async () => {
    const status = await refusal(
      custom.createNamespacedCustomObject({
        ...routes,
        body: httpRoute('Web_Route', [{ name: 'web', port: 80 }]),
      }),
    );
    expect(status.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          "Invalid value: \"Web_Route\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        field: 'metadata.name',
      },
    ]);
  });

  it('prints the causes through kubectl and checks Istio oneOf rules', async () => {
    const stderr = await kubectlFails(
      'apply',
      '-f',
      manifest(
        'bad-vs.yaml',
        `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: bad}
spec:
  hosts: [web]
  http:
    - match: [{uri: {prefix: /, exact: /x}}]
      route:
        - destination: {subset: stable}
          weight: 100
`,
      ),
    );
    expect(stderr).toContain('The VirtualService "bad" is invalid:');
    expect(stderr).toContain(
      '<nil>: Invalid value: "": "spec.http[0].match[0].uri" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    );
    expect(stderr).toContain('spec.http[0].route[0].destination.host: Required value');
  });

  it('checks every write: a patch that breaks the schema is refused and the route is unchanged', async () => {
    const before = (await custom.getNamespacedCustomObject({ ...routes, name: 'web' })) as {
      metadata: { resourceVersion: string };
    };
    const status = await refusal(
      custom.patchNamespacedCustomObject(
        {
          ...routes,
          name: 'web',
          body: [{ op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: -5 }],
        },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ),
    );
    expect(status.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: -5: spec.rules[0].backendRefs[1].weight in body should be greater than or equal to 0',
        field: 'spec.rules[0].backendRefs[1].weight',
      },
    ]);
    const patched = (await custom.patchNamespacedCustomObject(
      {
        ...routes,
        name: 'web',
        body: [
          { op: 'replace', path: '/spec/rules/0/backendRefs/0/weight', value: 80 },
          { op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: 20 },
        ],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    )) as {
      metadata: { resourceVersion: string };
      spec: { rules: Array<{ backendRefs: Array<{ weight: number }> }> };
    };
    expect(patched.spec.rules[0]?.backendRefs.map((b) => b.weight)).toEqual([80, 20]);
    expect(Number(patched.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
  });

  it('prunes unknown fields: dropped with a warning by default, refused by kubectl under Strict', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...routes,
      body: httpRoute('pruned', [{ name: 'web-stable', port: 80, color: 'blue' }], { mirror: true }),
    })) as {
      spec: Record<string, unknown> & { rules: Array<{ backendRefs: Array<Record<string, unknown>> }> };
    };
    expect(created.spec).not.toHaveProperty('mirror');
    expect(created.spec.rules[0]?.backendRefs[0]).toEqual({
      group: '',
      kind: 'Service',
      name: 'web-stable',
      port: 80,
      weight: 1,
    });
    const stored = (await custom.getNamespacedCustomObject({ ...routes, name: 'pruned' })) as {
      spec: object;
    };
    expect(stored.spec).toEqual(created.spec);

    const path = manifest(
      'unknown.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: strict}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [web.example]
  rules:
    - backendRefs: [{name: web-stable, port: 80, colour: blue}]
`,
    );
    expect(await kubectlFails('apply', '-f', path)).toContain(
      'HTTPRoute in version "v1" cannot be handled as a HTTPRoute: strict decoding error: unknown field "spec.rules[0].backendRefs[0].colour"',
    );
    expect(await kubectlFails('apply', '--server-side', '-f', path)).toContain(
      'failed to create typed patch object (default/strict; gateway.networking.k8s.io/v1, Kind=HTTPRoute): .spec.rules[0].backendRefs[0].colour: field not declared in schema',
    );
    const warned = await kubectl('apply', '--validate=warn', '-f', path);
    expect(warned.stderr).toContain('Warning: unknown field "spec.rules[0].backendRefs[0].colour"');
    const colour = await kubectl(
      'get',
      'httproute',
      'strict',
      '-o',
      'jsonpath={.spec.rules[0].backendRefs[0]}',
    );
    expect(JSON.parse(colour.stdout)).toEqual({
      group: '',
      kind: 'Service',
      name: 'web-stable',
      port: 80,
      weight: 1,
    });
  });

  it('validates status writes against the status schema and defaults them', async () => {
    const refused = await kubectlFails(
      'patch',
      'httproute',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"parents":[{"parentRef":{"name":"gateway"},"conditions":[]}]}}',
    );
    expect(refused).toContain('status.parents[0].controllerName: Required value');
    await kubectl(
      'patch',
      'httproute',
      'web',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          parents: [
            {
              parentRef: { name: 'gateway' },
              controllerName: 'example.com/gateway',
              conditions: [
                {
                  type: 'Accepted',
                  status: 'True',
                  reason: 'Accepted',
                  message: '',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                },
              ],
            },
          ],
        },
      }),
    );
    const parent = await kubectl('get', 'httproute', 'web', '-o', 'jsonpath={.status.parents[0].parentRef}');
    expect(JSON.parse(parent.stdout)).toEqual({
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'gateway',
    });
  });
});
