// examples/kustomize: each overlay rendered by the real `kubectl kustomize` is valid to Rollgate and deploys what it says.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { validateManifests } from '../../../src/manifest/validate.ts';
import {
  ROLLOUT_REFERENCES_FILE_NAME,
  rolloutReferencesConfiguration,
  withRolloutReferences,
} from '../../../src/render/kustomize/rollout-references.ts';

const run = promisify(execFile);
const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'examples', 'kustomize');

// The references of a Rollout that kustomize does not know by itself (the generated ConfigMap it reads, the
// Services its canary names, the AnalysisTemplates its steps run) are taught by the configuration Rollgate's
// render injects; here it is added to a copy of the example, so the repository stays as a user writes it.

/** What the assertions read of a rendered object (a parsing boundary: the rest is untyped). */
interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: {
    replicas?: number;
    template?: {
      spec: {
        containers: Array<{
          name: string;
          image?: string;
          envFrom?: Array<{ configMapRef?: { name: string } }>;
          resources?: { requests?: Record<string, string> };
        }>;
      };
    };
    strategy?: {
      canary?: {
        canaryService: string;
        stableService: string;
        steps: Array<{ analysis?: { templates: Array<{ templateName: string }> } }>;
      };
    };
  };
}

const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the example with Rollgate's Rollout references added to each overlay. */
function copyOfExample(): string {
  const copy = mkdtempSync(join(tmpdir(), 'rollgate-kustomize-example-'));
  copies.push(copy);
  cpSync(EXAMPLE, copy, { recursive: true });
  for (const overlay of ['staging', 'prod']) {
    const dir = join(copy, 'apps', 'web', 'overlays', overlay);
    writeFileSync(join(dir, ROLLOUT_REFERENCES_FILE_NAME), rolloutReferencesConfiguration());
    const kustomization = join(dir, 'kustomization.yaml');
    writeFileSync(kustomization, withRolloutReferences(readFileSync(kustomization, 'utf8')));
  }
  return copy;
}

/** `kubectl kustomize` of an overlay: the YAML stream Rollgate's sync would apply. */
async function render(copy: string, overlay: string): Promise<string> {
  const dir = join(copy, 'apps', 'web', 'overlays', overlay);
  const { stdout } = await run('kubectl', ['kustomize', dir], { timeout: 30_000, maxBuffer: 4 << 20 });
  return stdout;
}

function objectsOf(text: string): Rendered[] {
  return parseAllDocuments(text).map((doc) => doc.toJS() as Rendered);
}

function named(objects: Rendered[], kind: string): Rendered[] {
  return objects.filter((o) => o.kind === kind);
}

describe('examples/kustomize rendered by kubectl kustomize', () => {
  it.each([
    {
      overlay: 'staging',
      namespace: 'web-staging',
      rollout: 'staging-web',
      image: 'ghcr.io/rollgate/web:1.1.0',
      replicas: 1,
      cpu: '100m',
      settings: {
        LOG_LEVEL: 'debug',
        CHECKOUT_TIMEOUT_MS: '2000',
        FEATURE_NEW_CHECKOUT: 'true',
      },
    },
    {
      overlay: 'prod',
      namespace: 'web-prod',
      rollout: 'web',
      image: 'ghcr.io/rollgate/web:1.0.3',
      replicas: 6,
      cpu: '500m',
      settings: { LOG_LEVEL: 'warn', CHECKOUT_TIMEOUT_MS: '1500', FEATURE_NEW_CHECKOUT: 'false' },
    },
  ])(
    '$overlay: passes Rollgate validation and its Rollout runs $image with its own settings, Services and analysis',
    async ({ overlay, namespace, rollout, image, replicas, cpu, settings }) => {
      const text = await render(copyOfExample(), overlay);

      const report = validateManifests([{ file: `overlays/${overlay} (rendered)`, text }]);
      expect(
        report.objects.flatMap((o) => o.errors.map((e) => `${o.kind}: ${e.path}: ${e.message}`)),
      ).toEqual([]);
      expect(report.objects.flatMap((o) => o.warnings)).toEqual([]);
      expect(report.summary).toEqual({ valid: 2, invalid: 0, skipped: 3 });

      const objects = objectsOf(text);
      expect(objects.map((o) => [o.kind, o.metadata.namespace])).toEqual(
        ['ConfigMap', 'Service', 'Service', 'AnalysisTemplate', 'Rollout'].map((kind) => [kind, namespace]),
      );
      for (const object of objects) expect(object.metadata.labels?.['environment']).toBe(overlay);

      const [rolloutObject] = named(objects, 'Rollout');
      expect(rolloutObject?.metadata.name).toBe(rollout);
      expect(rolloutObject?.spec?.replicas).toBe(replicas);
      const container = rolloutObject?.spec?.template?.spec.containers[0];
      expect(container?.image).toBe(image);
      expect(container?.resources?.requests?.['cpu']).toBe(cpu);

      // The Rollout reads the ConfigMap the overlay generated (hash-suffixed), with the overlay's values.
      const [config] = named(objects, 'ConfigMap');
      expect(config?.metadata.name).toMatch(new RegExp(`^${rollout}-config-[a-z0-9]{10}$`));
      expect(container?.envFrom).toEqual([{ configMapRef: { name: config?.metadata.name } }]);
      expect(config?.data).toEqual(settings);

      // Its canary names the Services and the AnalysisTemplate the overlay renders.
      const canary = rolloutObject?.spec?.strategy?.canary;
      expect(named(objects, 'Service').map((s) => s.metadata.name)).toEqual([
        canary?.canaryService,
        canary?.stableService,
      ]);
      const templates = canary?.steps.flatMap((step) => step.analysis?.templates ?? []);
      expect(templates?.map((t) => t.templateName)).toEqual(
        named(objects, 'AnalysisTemplate').map((t) => t.metadata.name),
      );
    },
  );

  it('a settings change in one overlay renders a new ConfigMap name there only (a new revision, hence a canary)', async () => {
    const copy = copyOfExample();
    const configName = async (overlay: string) =>
      named(objectsOf(await render(copy, overlay)), 'ConfigMap')[0]?.metadata.name;
    const before = { staging: await configName('staging'), prod: await configName('prod') };
    const kustomization = join(copy, 'apps', 'web', 'overlays', 'staging', 'kustomization.yaml');
    writeFileSync(
      kustomization,
      readFileSync(kustomization, 'utf8').replace('LOG_LEVEL=debug', 'LOG_LEVEL=trace'),
    );
    expect(await configName('staging')).not.toBe(before.staging);
    expect(await configName('prod')).toBe(before.prod);
  });
});
