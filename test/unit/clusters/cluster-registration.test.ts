// Which registration holds a name: the same answer in every process, whatever order the Secrets arrived in.
import { describe, expect, it } from 'vitest';
import {
  resolveRegistrations,
  type ClusterRegistration,
} from '../../../src/clusters/cluster-registration.ts';

const local: ClusterRegistration = {
  name: 'in-cluster',
  origin: 'local',
  declaredBy: 'kubernetes',
  problems: [],
};
const context = (name: string, i: number): ClusterRegistration => ({
  name,
  origin: 'kubeconfig',
  declaredBy: `clusters[${i}]`,
  problems: [],
  target: { kind: 'context', context: name },
});
const secret = (name: string, secretName: string, problems: string[] = []): ClusterRegistration => ({
  name,
  origin: 'argocd-secret',
  declaredBy: `Secret argocd/${secretName}`,
  problems,
});

describe('resolveRegistrations', () => {
  it('gives each name to local, then config, then Secrets by name, whatever the order', () => {
    const all = [
      secret('eu', 'z-eu'),
      secret('eu', 'a-eu'),
      context('us', 0),
      secret('us', 'us'),
      local,
      secret('in-cluster', 'mine'),
    ];
    for (const order of [all, [...all].reverse()]) {
      const { active, refused } = resolveRegistrations(order);
      expect([...active.entries()].map(([name, r]) => `${name}=${r.declaredBy}`).sort()).toEqual([
        'eu=Secret argocd/a-eu',
        'in-cluster=kubernetes',
        'us=clusters[0]',
      ]);
      expect(refused.map((r) => `${r.registration.declaredBy}: ${r.message}`).sort()).toEqual([
        'Secret argocd/mine: the name "in-cluster" is the local cluster\'s (kubernetes.clusterName); pick another',
        'Secret argocd/us: the name "us" is already registered by clusters[0]',
        'Secret argocd/z-eu: the name "eu" is already registered by Secret argocd/a-eu',
      ]);
    }
  });

  it('refuses a registration with problems and lets the next one take its name', () => {
    const { active, refused } = resolveRegistrations([
      local,
      secret('eu', 'a', ['data.server is missing']),
      secret('eu', 'b'),
    ]);
    expect(active.get('eu')?.declaredBy).toBe('Secret argocd/b');
    expect(refused).toEqual([
      { registration: secret('eu', 'a', ['data.server is missing']), message: 'data.server is missing' },
    ]);
  });
});
