// Finding the promoted Rollout in the from source's files: what Git holds is what the promotion may propose.
import { describe, expect, it } from 'vitest';
import { specManifestParser } from '../../../src/git/manifest-parser.ts';
import { gitRolloutOf } from '../../../src/promoter/read-git-rollout.ts';
import { podTemplateHash } from '../../../src/rollout/index.ts';
import { webRollout } from '../../support/web-rollout.ts';

const TIP = 'b0a710ad5eed';
const template = (image: string) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image }] },
});
const read = (files: Record<string, string>) => ({
  tip: TIP,
  files: Object.entries(files).map(([path, text]) => ({ path, text })),
});
const query = { namespace: 'staging', name: 'web', defaultNamespace: 'staging' };

describe('gitRolloutOf', () => {
  it('finds the Rollout and hashes its template as the reconciler hashes the live one', () => {
    const found = gitRolloutOf(
      read({ 'envs/staging/web.yaml': webRollout('registry.example/web:2.0.0') }),
      query,
    );
    expect(found).toEqual({
      found: true,
      commit: TIP,
      images: [{ container: 'app', image: 'registry.example/web:2.0.0' }],
      podTemplateHash: podTemplateHash(template('registry.example/web:2.0.0')),
    });
    const collided = gitRolloutOf(read({ 'web.yaml': webRollout('registry.example/web:2.0.0') }), {
      ...query,
      collisionCount: 2,
    });
    expect(collided.found && collided.podTemplateHash).toBe(
      podTemplateHash(template('registry.example/web:2.0.0'), 2),
    );
  });

  it('a workloadRef Rollout takes its template from the Deployment in the same files', () => {
    const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: { name: web }
spec:
  workloadRef: { apiVersion: apps/v1, kind: Deployment, name: web-pods }
  strategy: { canary: { steps: [{ setWeight: 50 }] } }
`;
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web-pods }
spec:
  replicas: 0
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: app, image: registry.example/web:3.0.0 }] }
`;
    const found = gitRolloutOf(read({ 'rollout.yaml': rollout, 'deployment.yaml': deployment }), query);
    expect(found).toMatchObject({
      found: true,
      images: [{ container: 'app', image: 'registry.example/web:3.0.0' }],
    });
    expect(gitRolloutOf(read({ 'rollout.yaml': rollout }), query)).toEqual({
      found: false,
      commit: TIP,
      reason: 'no Deployment web-pods (its workloadRef)',
    });
  });

  it('missing, in another namespace, or twice: not found, with why', () => {
    expect(gitRolloutOf(read({}), query)).toEqual({
      found: false,
      commit: TIP,
      reason: "no Rollout web under the source's path",
    });
    const elsewhere = webRollout('registry.example/web:2.0.0').replace(
      '  name: web\n',
      '  name: web\n  namespace: other\n',
    );
    expect(gitRolloutOf(read({ 'web.yaml': elsewhere }), query).found).toBe(false);
    const twice = webRollout('registry.example/web:2.0.0');
    expect(gitRolloutOf(read({ 'a.yaml': twice, 'b.yaml': twice }), query)).toMatchObject({
      found: false,
      reason: '2 Rollouts named web',
    });
  });

  it("a rendering source's objects are what Git holds: its files (a kustomization) are not looked in", () => {
    const rendered = specManifestParser.parse(
      'apps/web/overlays/staging/kustomization.yaml',
      webRollout('registry.example/web:3.0.0'),
    ).objects;
    const overlay = {
      'apps/web/overlays/staging/kustomization.yaml': 'resources:\n  - ../../base\n',
    };
    expect(gitRolloutOf({ ...read(overlay), objects: rendered }, query)).toMatchObject({
      found: true,
      images: [{ container: 'app', image: 'registry.example/web:3.0.0' }],
      podTemplateHash: podTemplateHash(template('registry.example/web:3.0.0')),
    });
    expect(gitRolloutOf(read(overlay), query).found).toBe(false);
  });
});
