// Discovery's view of CRD-served groups: versions in Kubernetes' priority, the preferred one first.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { compareKubeVersions, ResourceRegistry } from '../../../src/sandbox/resources/resource-registry.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

const crds = upstreamCorpus('crds', import.meta.filename);

describe('resource registry', () => {
  it('orders versions as Kubernetes does', () => {
    expect(
      ['v1alpha1', 'v1beta1', 'foo', 'v2', 'v1', 'v1beta2', 'v1alpha3'].sort(compareKubeVersions),
    ).toEqual(['v2', 'v1', 'v1beta2', 'v1beta1', 'v1alpha3', 'v1alpha1', 'foo']);
  });

  // The same rules on a CRD written here, so they hold on a clone without the upstream corpus too.
  it('prefers the highest served version over the storage version, and serves no unserved version', () => {
    const version = (name: string, served: boolean, storage: boolean, status: boolean) => ({
      name,
      served,
      storage,
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      ...(status ? { subresources: { status: {} } } : {}),
    });
    const registry = new ResourceRegistry();
    const types = registry.registerCrd({
      metadata: { name: 'widgets.example.test' },
      spec: {
        group: 'example.test',
        scope: 'Namespaced',
        names: { kind: 'Widget', plural: 'widgets' },
        versions: [
          version('v1alpha1', false, false, false),
          version('v1beta1', true, true, false),
          version('v1', true, false, true),
        ],
      },
    });
    expect(types.map((t) => [t.version, t.statusSubresource]).sort()).toEqual([
      ['v1', true],
      ['v1beta1', false],
    ]);
    expect(registry.groups().find((g) => g.name === 'example.test')).toEqual({
      name: 'example.test',
      versions: ['v1', 'v1beta1'],
      preferredVersion: 'v1',
    });
  });

  it.skipIf(crds.missing)(
    'prefers ReferenceGrant v1 although v1beta1 is its storage version, and serves no unserved version',
    () => {
      const registry = new ResourceRegistry();
      const crd = parseYaml(
        readFileSync(crds.file('gateway.networking.k8s.io_referencegrants.yaml'), 'utf8'),
      );
      const types = registry.registerCrd(crd);
      expect(types.map((t) => t.version).sort()).toEqual(['v1', 'v1beta1']);
      expect(types.every((t) => t.namespaced && t.schema !== undefined)).toBe(true);
      expect(registry.groups().find((g) => g.name === 'gateway.networking.k8s.io')).toEqual({
        name: 'gateway.networking.k8s.io',
        versions: ['v1', 'v1beta1'],
        preferredVersion: 'v1',
      });
      const tcp = registry.registerCrd(
        parseYaml(readFileSync(crds.file('gateway.networking.k8s.io_tcproutes.yaml'), 'utf8')),
      );
      expect(tcp.map((t) => [t.version, t.statusSubresource])).toEqual([['v1', true]]);
    },
  );
});
