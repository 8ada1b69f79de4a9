// deploy/components/monitoring as a platform team running the Prometheus Operator uses it: added to an
// install by the real kustomize, its objects accepted by the operator's own CRD schemas (read from its
// repository at test time), its rules accepted by the real promtool, and each alert firing on the series
// that should fire it and staying silent on the healthy ones (`promtool test rules`).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';
import {
  PROMETHEUS_OPERATOR_CRDS,
  prometheusOperatorCheckout,
} from '../../support/prometheus-operator-checkout.ts';
import { kustomize, parseRendered, type RenderedObject } from './rendered-install.ts';

const run = promisify(execFile);
const REPO_ROOT = resolve(import.meta.dirname, '..', '..', '..');
const operator = prometheusOperatorCheckout(
  import.meta.filename,
  "the monitoring component's objects against the Prometheus Operator's CRD schemas",
);

let tmp: string;
/** Installs with the component, by the overlay they start from. */
const rendered: Record<'base' | 'split', RenderedObject[]> = { base: [], split: [] };

/** Renders `install` (a folder of deploy/) with the component added, as a user's own kustomization does. */
async function renderWithComponent(install: string): Promise<RenderedObject[]> {
  const dir = mkdtempSync(join(tmp, 'install-'));
  // kustomize takes no absolute paths: the user's kustomization names deploy/ relatively.
  const fromDir = (path: string) => relative(dir, join(REPO_ROOT, path));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    stringify({
      resources: [fromDir(install)],
      components: [fromDir('deploy/components/monitoring')],
    }),
  );
  return parseRendered(await kustomize(dir));
}

const one = (objects: RenderedObject[], kind: string, name: string): RenderedObject => {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
};

const matches = (selector: Record<string, string>, labels: Record<string, string> = {}): boolean =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'rollgate-monitoring-'));
  rendered.base = await renderWithComponent('deploy');
  rendered.split = await renderWithComponent('deploy/overlays/split');
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('deploy/components/monitoring rendered into an install', () => {
  it('adds a metrics Service over every Rollgate pod, a ServiceMonitor that follows it and the rules', () => {
    for (const objects of Object.values(rendered)) {
      const service = one(objects, 'Service', 'rollgate-metrics') as RenderedObject & {
        spec: { selector: Record<string, string>; ports: Array<{ name: string; targetPort: string }> };
      };
      const monitor = one(objects, 'ServiceMonitor', 'rollgate') as RenderedObject & {
        spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string }> };
      };
      one(objects, 'PrometheusRule', 'rollgate');
      for (const o of [service, monitor]) expect(o.metadata.namespace).toBe('rollgate-system');
      expect(matches(monitor.spec.selector.matchLabels, service.metadata.labels)).toBe(true);
      expect(service.spec.ports.map((p) => p.name)).toContain(monitor.spec.endpoints[0]!.port);
      // Every Deployment's pods (the split install's reconcilers too) are behind the metrics Service, on a
      // container port of the name the Service targets.
      const deployments = objects.filter(
        (o) => o.kind === 'Deployment' && o.metadata.name.startsWith('rollgate'),
      );
      expect(deployments.length).toBeGreaterThan(0);
      for (const deployment of deployments) {
        const template = (
          deployment as unknown as {
            spec: {
              template: {
                metadata: { labels: Record<string, string> };
                spec: { containers: Array<{ ports?: Array<{ name: string }> }> };
              };
            };
          }
        ).spec.template;
        expect(matches(service.spec.selector, template.metadata.labels), deployment.metadata.name).toBe(true);
        const ports = template.spec.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
        expect(ports).toContain(service.spec.ports[0]!.targetPort);
      }
    }
    expect(rendered.split.filter((o) => o.kind === 'Deployment').length).toBeGreaterThan(1);
  });
});

describe('the PrometheusRule', () => {
  let rulesFile: string;

  beforeAll(() => {
    const rule = one(rendered.base, 'PrometheusRule', 'rollgate') as RenderedObject & { spec: unknown };
    rulesFile = join(tmp, 'rules.yaml');
    writeFileSync(rulesFile, stringify(rule.spec));
  });

  it('is accepted by promtool', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', rulesFile]);
    expect(stdout).toContain('SUCCESS: 4 rules found');
  });

  it('fires each alert on the series that should fire it, and only then (promtool test rules)', async () => {
    const rollout = (name: string, phase: string, pod: string, cluster = 'in-cluster') =>
      `rollout_info{namespace="shop",name="${name}",strategy="canary",traffic_router="",phase="${phase}",cluster="${cluster}",pod="${pod}"}`;
    const tests = {
      rule_files: [rulesFile],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // Two reconciler processes serve the same series: one alert per rollout, not one per process.
            { series: rollout('cart', 'Abort', 'a'), values: '1x10' },
            { series: rollout('cart', 'Abort', 'b'), values: '1x10' },
            { series: rollout('web', 'Paused', 'a'), values: '1x10' },
            // shop/cart of another cluster, aborted too: an alert of its own, naming its cluster.
            { series: rollout('cart', 'Abort', 'a', 'eu-west'), values: '1x10' },
            { series: rollout('api', 'Completed', 'a'), values: '1x10' },
            // Degraded for only 3 minutes: under the 5 minutes it takes to alert.
            { series: rollout('blip', 'Timeout', 'a'), values: '1x3 stale' },
            { series: 'rollgate_syncs_total{source="apps",result="failed",pod="a"}', values: '0 1 1 1 1 1' },
            { series: 'rollgate_syncs_total{source="infra",result="failed",pod="a"}', values: '0 1 1 1 1 1' },
            { series: 'rollgate_syncs_total{source="infra",result="synced",pod="a"}', values: '0 0 1 1 1 1' },
            { series: 'rollgate_queue_jobs{queue="reconcile",state="waiting",pod="a"}', values: '1500x20' },
            { series: 'rollgate_queue_jobs{queue="reconcile",state="waiting",pod="b"}', values: '1500x20' },
            { series: 'rollgate_queue_jobs{queue="sync",state="waiting",pod="a"}', values: '20x20' },
            { series: 'rollgate_dependency_up{dependency="redis",source="",pod="a"}', values: '0x10' },
            { series: 'rollgate_dependency_up{dependency="redis",source="",pod="b"}', values: '0x10' },
            // One process cut off, the other reaching the API server: not every process is failing.
            { series: 'rollgate_dependency_up{dependency="kubernetes",source="",pod="a"}', values: '0x10' },
            { series: 'rollgate_dependency_up{dependency="kubernetes",source="",pod="b"}', values: '1x10' },
          ],
          alert_rule_test: [
            {
              eval_time: '6m',
              alertname: 'RollgateRolloutDegraded',
              exp_alerts: [
                ...['in-cluster', 'eu-west'].map((cluster) => ({
                  exp_labels: {
                    severity: 'warning',
                    cluster,
                    namespace: 'shop',
                    name: 'cart',
                    phase: 'Abort',
                  },
                  exp_annotations: {
                    summary: `Rollout shop/cart in cluster ${cluster} is Abort`,
                    description:
                      'The rollout stopped short of its new revision (Abort); `rollgate get rollout cart -n shop` says why.',
                  },
                })),
              ],
            },
            {
              eval_time: '5m',
              alertname: 'RollgateSyncFailing',
              exp_alerts: [
                {
                  exp_labels: { severity: 'warning', source: 'apps' },
                  exp_annotations: {
                    summary: 'Source apps failed to sync',
                    description:
                      'A sync of source apps failed or halted in the last 30 minutes and none succeeded; its status names the file, line and object.',
                  },
                },
              ],
            },
            { eval_time: '10m', alertname: 'RollgateQueueBacklog', exp_alerts: [] },
            {
              eval_time: '16m',
              alertname: 'RollgateQueueBacklog',
              exp_alerts: [
                {
                  exp_labels: { severity: 'warning', queue: 'reconcile' },
                  exp_annotations: {
                    summary: 'Rollgate queue reconcile holds 1500 waiting jobs',
                    description:
                      'More than 1,000 jobs have been waiting in the reconcile queue for 15 minutes: the workers do not keep up (too few processes, or a slow API server).',
                  },
                },
              ],
            },
            {
              eval_time: '6m',
              alertname: 'RollgateDependencyDown',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', dependency: 'redis' },
                  exp_annotations: {
                    summary: 'Rollgate cannot reach redis',
                    description:
                      "No Rollgate process has reached redis for 5 minutes; the processes' logs name the error.",
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const testFile = join(tmp, 'rules-test.yaml');
    writeFileSync(testFile, stringify(tests));
    const result = await run('promtool', ['test', 'rules', testFile]).then(
      (r) => ({ ok: true, out: r.stdout + r.stderr }),
      (err: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${err.stdout}${err.stderr}` }),
    );
    expect(result.out).toContain('SUCCESS');
    expect(result.ok, result.out).toBe(true);
  });
});

describe.skipIf(operator.missing)("the Prometheus Operator's CRD schemas", () => {
  let sandbox: Sandbox;
  let kubeconfig: string;
  const kubectl = async (args: string[], input?: string): Promise<{ ok: boolean; out: string }> => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
    child.stdin?.end(input ?? '');
    return new Promise((done) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (code) => done({ ok: code === 0, out }));
    });
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    kubeconfig = join(tmp, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    for (const crd of ['servicemonitors', 'prometheusrules']) {
      const applied = await kubectl(
        ['apply', '--server-side', '-f', '-'],
        operator.show(`${PROMETHEUS_OPERATOR_CRDS}/monitoring.coreos.com_${crd}.yaml`),
      );
      expect(applied.ok, applied.out).toBe(true);
    }
    expect((await kubectl(['create', 'namespace', 'rollgate-system'])).ok).toBe(true);
  });

  afterAll(async () => {
    await sandbox?.stop();
  });

  it('accept the ServiceMonitor and the PrometheusRule, and refuse a rule the operator would not load', async () => {
    const objects = rendered.base.filter((o) => o.kind === 'ServiceMonitor' || o.kind === 'PrometheusRule');
    expect(objects).toHaveLength(2);
    const applied = await kubectl(
      ['apply', '--server-side', '-f', '-'],
      objects.map((o) => stringify(o)).join('---\n'),
    );
    expect(applied.ok, applied.out).toBe(true);
    expect(applied.out).toContain('servicemonitor.monitoring.coreos.com/rollgate serverside-applied');
    expect(applied.out).toContain('prometheusrule.monitoring.coreos.com/rollgate serverside-applied');
    // The schema is enforced, not merely stored: a `for` Prometheus cannot parse is refused by name.
    const rule = structuredClone(objects.find((o) => o.kind === 'PrometheusRule')!) as RenderedObject & {
      spec: { groups: Array<{ rules: Array<{ for?: string }> }> };
    };
    rule.metadata.name = 'broken';
    rule.spec.groups[0]!.rules[0]!.for = 'five minutes';
    const refused = await kubectl(['apply', '--server-side', '-f', '-'], stringify(rule));
    expect(refused.ok).toBe(false);
    expect(refused.out).toContain('spec.groups[0].rules[0].for');
  });
});
