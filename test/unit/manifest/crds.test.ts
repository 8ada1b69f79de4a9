// Tests for the generated CRDs: structural schemas Kubernetes accepts, and deploy/crds kept up to date.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argoCrds, rollgateCrds } from '../../../src/manifest/crds.ts';

const root = join(import.meta.dirname, '..', '..', '..');

type Node = Record<string, unknown>;

// Kubernetes' structural-schema rules that our converter must respect, checked node by node.
function structuralProblems(node: Node, path: string, problems: string[]): void {
  for (const banned of [
    '$ref',
    'anyOf',
    'oneOf',
    'allOf',
    'not',
    'propertyNames',
    '$schema',
    'definitions',
    '$defs',
  ]) {
    if (banned in node) problems.push(`${path}: has ${banned}`);
  }
  const typed =
    typeof node['type'] === 'string' ||
    node['x-kubernetes-int-or-string'] === true ||
    node['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed) problems.push(`${path}: no type`);
  if ('properties' in node && 'additionalProperties' in node)
    problems.push(`${path}: properties and additionalProperties`);
  for (const [key, child] of Object.entries((node['properties'] as Record<string, Node> | undefined) ?? {})) {
    structuralProblems(child, `${path}.${key}`, problems);
  }
  if (typeof node['items'] === 'object') structuralProblems(node['items'] as Node, `${path}[]`, problems);
  if (typeof node['additionalProperties'] === 'object') {
    structuralProblems(node['additionalProperties'] as Node, `${path}{}`, problems);
  }
}

describe('rollgateCrds', () => {
  const crds = rollgateCrds() as Array<{
    metadata: { name: string };
    spec: { names: { shortNames: string[] }; scope: string; versions: Array<Record<string, unknown>> };
  }>;

  it('defines our seven kinds with their short names and scopes', () => {
    expect(crds.map((crd) => [crd.metadata.name, crd.spec.names.shortNames, crd.spec.scope])).toEqual([
      ['rollouts.rollgate.dev', ['ro'], 'Namespaced'],
      ['analysistemplates.rollgate.dev', ['at'], 'Namespaced'],
      ['clusteranalysistemplates.rollgate.dev', ['cat'], 'Cluster'],
      ['analysisruns.rollgate.dev', ['ar'], 'Namespaced'],
      ['experiments.rollgate.dev', ['exp'], 'Namespaced'],
      ['gitsources.rollgate.dev', ['gsrc'], 'Namespaced'],
      ['fleets.rollgate.dev', ['flt'], 'Namespaced'],
    ]);
  });

  it("gives GitSources a status subresource and the printer columns kubectl get shows, and none in Argo's group", () => {
    const gitSource = crds[5]?.spec.versions[0] as {
      subresources: { status: object };
      additionalPrinterColumns: Array<{ name: string; jsonPath: string; priority?: number }>;
    };
    expect(gitSource.subresources).toEqual({ status: {} });
    expect(gitSource.additionalPrinterColumns.map((c) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
      ['URL', '.spec.url', 0],
      ['Ref', '.status.ref', 0],
      ['Commit', '.status.shortCommit', 0],
      ['Synced', '.status.conditions[?(@.type=="Synced")].status', 0],
      ['Healthy', '.status.conditions[?(@.type=="Healthy")].status', 0],
      ['Age', '.metadata.creationTimestamp', 0],
      ['Message', '.status.message', 1],
    ]);
    expect(argoCrds().map((crd) => (crd as { metadata: { name: string } }).metadata.name)).not.toContain(
      'gitsources.argoproj.io',
    );
  });

  it('gives Rollouts and AnalysisRuns a status subresource that keeps unknown fields', () => {
    const rollout = crds[0]?.spec.versions[0] as {
      subresources: { status: object };
      schema: { openAPIV3Schema: { properties: { status: Node } } };
    };
    expect(rollout.subresources.status).toEqual({});
    expect(rollout.schema.openAPIV3Schema.properties.status['x-kubernetes-preserve-unknown-fields']).toBe(
      true,
    );
    expect((crds[3]?.spec.versions[0] as { subresources?: object }).subresources).toEqual({ status: {} });
  });

  it('produces structural schemas (no $ref/anyOf, every node typed)', () => {
    for (const crd of crds) {
      const problems: string[] = [];
      const schema = (crd.spec.versions[0] as { schema: { openAPIV3Schema: Node } }).schema.openAPIV3Schema;
      structuralProblems(schema, crd.metadata.name, problems);
      expect(problems).toEqual([]);
    }
  });

  it('marks int-or-string fields and keeps the pod template open', () => {
    const schema = JSON.stringify(crds[0]?.spec.versions[0]);
    const spec = (
      crds[0]?.spec.versions[0] as {
        schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, Node> } } } };
      }
    ).schema.openAPIV3Schema.properties.spec.properties;
    expect(spec['template']?.['x-kubernetes-preserve-unknown-fields']).toBe(true);
    const canary = (spec['strategy']?.['properties'] as Record<string, Node>)['canary']?.[
      'properties'
    ] as Record<string, Node>;
    expect(canary['maxSurge']).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(schema).not.toContain('9007199254740991');
  });
});

describe('deploy/crds', () => {
  it('is up to date with the schemas (npm run crds:check passes)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/generate-crds.ts', '--check'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('--check names a stale file and exits 1', () => {
    const copy = mkdtempSync(join(tmpdir(), 'rollgate-crds-'));
    try {
      mkdirSync(join(copy, 'deploy'), { recursive: true });
      cpSync(join(root, 'deploy', 'crds'), join(copy, 'deploy', 'crds'), { recursive: true });
      writeFileSync(join(copy, 'deploy', 'crds', 'analysisruns.rollgate.dev.yaml'), 'stale: true\n');
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'scripts/generate-crds.ts', '--check', '--root', copy],
        { cwd: root, encoding: 'utf8' },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('deploy/crds/analysisruns.rollgate.dev.yaml');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
