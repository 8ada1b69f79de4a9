// The Rollout reference configuration with the real `kubectl kustomize`: every reference follows a prefix, suffix or generator hash, labels reach selectors.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  ROLLOUT_REFERENCES_FILE_NAME,
  rolloutReferencesConfiguration,
  withRolloutReferences,
} from '../../../../src/render/kustomize/rollout-references.ts';
import {
  BASE,
  GENERATED_CONFIG_MAPS,
  GENERATED_SECRETS,
  STAGING,
  WITH_COMPONENT,
  WITH_OWN_CONFIGURATION,
  WITH_REPLICAS,
} from './rollout-references-fixture.ts';

const run = promisify(execFile);
const KUSTOMIZATION_FILE = /^(kustomization\.ya?ml|Kustomization)$/;

/** A rendered object; the rest is read field by field (a parsing boundary). */
interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rollgate-rollout-refs-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * Writes the files into a new directory, as Rollgate materializes a source: when `teach` says so for a
 * kustomization's directory, the configuration is written beside it and the kustomization lists it.
 */
function materialize(files: Record<string, string>, teach: (kustomizationDir: string) => boolean): string {
  const dir = mkdtempSync(join(root, 'tree-'));
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    const isKustomization = KUSTOMIZATION_FILE.test(basename(path));
    if (isKustomization && teach(dirname(path))) {
      writeFileSync(full, withRolloutReferences(text));
      writeFileSync(join(dirname(full), ROLLOUT_REFERENCES_FILE_NAME), rolloutReferencesConfiguration());
    } else {
      writeFileSync(full, text);
    }
  }
  return dir;
}

async function kustomize(dir: string): Promise<Rendered[]> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { timeout: 30_000, maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as Rendered | null)
    .filter((obj): obj is Rendered => obj !== null);
}

const everywhere = (): boolean => true;
const nowhere = (): boolean => false;

/** Every string under `value`, with where it is (for failure messages). */
function strings(value: unknown, at = ''): Array<{ at: string; text: string }> {
  if (typeof value === 'string') return [{ at, text: value }];
  if (Array.isArray(value)) return value.flatMap((item, index) => strings(item, `${at}[${index}]`));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, item]) => strings(item, at === '' ? key : `${at}.${key}`));
  return [];
}

/** The objects that name others, and every name their specs write. */
const REFERRER_KINDS = new Set([
  'Rollout',
  'AnalysisTemplate',
  'ClusterAnalysisTemplate',
  'Experiment',
  'HorizontalPodAutoscaler',
]);
function writtenNames(objects: readonly Rendered[]): Array<{ where: string; text: string }> {
  return objects
    .filter((obj) => REFERRER_KINDS.has(obj.kind))
    .flatMap((obj) =>
      strings(obj.spec).map(({ at, text }) => ({ where: `${obj.kind}/${obj.metadata.name}: ${at}`, text })),
    );
}

/** The names of the base's objects and generators, as written before any overlay renames them. */
function baseNames(): string[] {
  const names: string[] = [...GENERATED_CONFIG_MAPS, ...GENERATED_SECRETS];
  for (const path of ['base/rollouts.yaml', 'base/analysis.yaml', 'base/targets.yaml'])
    for (const doc of parseAllDocuments(BASE[path] ?? '')) names.push((doc.toJS() as Rendered).metadata.name);
  return names;
}

/** The rendered name of a base object (prefix, suffix and, for generated ones, the hash). */
function renderedName(objects: readonly Rendered[], kind: string, pattern: RegExp): string {
  const found = objects.filter((obj) => obj.kind === kind && pattern.test(obj.metadata.name));
  expect(found.map((obj) => obj.metadata.name)).toHaveLength(1);
  return found[0]!.metadata.name;
}

function byName(objects: readonly Rendered[], kind: string, name: string): Rendered {
  const found = objects.find((obj) => obj.kind === kind && obj.metadata.name === name);
  if (found === undefined)
    throw new Error(
      `no ${kind}/${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  return found;
}

interface PodTemplateView {
  selector?: { matchLabels?: Record<string, string> };
  template?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { containers?: Array<{ image: string; envFrom?: Array<{ configMapRef?: { name: string } }> }> };
  };
  replicas?: number;
  strategy?: {
    canary?: {
      stableService?: string;
      steps?: Array<{ analysis?: { templates: Array<{ templateName: string }> } }>;
    };
  };
}
const specOf = (obj: Rendered): PodTemplateView => (obj.spec ?? {}) as PodTemplateView;

describe('an overlay with a prefix, a suffix, a namespace, selector labels and images', () => {
  const files = { ...BASE, ...STAGING };
  let taught: Rendered[];
  let untaught: Rendered[];
  beforeAll(async () => {
    [taught, untaught] = await Promise.all([
      kustomize(join(materialize(files, everywhere), 'overlays/staging')),
      kustomize(join(materialize(files, nowhere), 'overlays/staging')),
    ]);
  });

  it('renames every base object, generated ones with their hash', () => {
    expect(renderedName(taught, 'ConfigMap', /^staging-cm-envfrom-v2-[a-z0-9]{10}$/)).toMatch(/^staging-/);
    expect(byName(taught, 'Service', 'staging-svc-stable-v2').metadata.namespace).toBe('staging');
  });

  it('leaves no reference to a base name anywhere in a Rollout, template, Experiment or autoscaler', () => {
    const original = new Set(baseNames());
    const stale = writtenNames(taught).filter(({ text }) => original.has(text));
    expect(stale).toEqual([]);
  });

  it('points every reference at an object of the render (each base object is named by some field)', () => {
    const written = new Set(writtenNames(taught).map(({ text }) => text));
    const referrersOnly = new Set([
      'staging-ro-web-v2',
      'staging-ro-routers-v2',
      'staging-ro-bluegreen-v2',
      'staging-exp-web-v2',
      'staging-hpa-workload-v2',
    ]);
    const unnamed = taught
      .map((obj) => obj.metadata.name)
      .filter((name) => !referrersOnly.has(name) && !written.has(name));
    expect(unnamed).toEqual([]);
  });

  it('gives the Rollout the ConfigMap, Service and template names the overlay produced', () => {
    const web = specOf(byName(taught, 'Rollout', 'staging-ro-web-v2'));
    const envFrom = web.template?.spec?.containers?.[0]?.envFrom?.[0]?.configMapRef?.name;
    expect(envFrom).toBe(renderedName(taught, 'ConfigMap', /^staging-cm-envfrom-v2-/));
    expect(web.strategy?.canary?.stableService).toBe('staging-svc-stable-v2');
    expect(web.strategy?.canary?.steps?.[1]?.analysis?.templates.map((t) => t.templateName)).toEqual([
      'staging-at-step-v2',
      'staging-cat-step-v2',
    ]);
  });

  it('puts the selector labels in the Rollout selector and pod template, so the Service selects its pods', () => {
    const service = byName(taught, 'Service', 'staging-svc-stable-v2').spec as {
      selector: Record<string, string>;
    };
    const web = specOf(byName(taught, 'Rollout', 'staging-ro-web-v2'));
    expect(service.selector).toEqual({ app: 'web', env: 'staging' });
    expect(web.selector?.matchLabels).toEqual({ app: 'web', env: 'staging' });
    expect(web.template?.metadata?.labels).toMatchObject(service.selector);
  });

  it('sets images in Rollouts and analysis jobs', () => {
    const web = specOf(byName(taught, 'Rollout', 'staging-ro-web-v2'));
    expect(web.template?.spec?.containers?.[0]?.image).toBe('nginx:1.27');
    const job = strings(byName(taught, 'AnalysisTemplate', 'staging-at-step-v2').spec).find(({ at }) =>
      at.endsWith('containers[0].image'),
    );
    expect(job?.text).toBe('busybox:1.36');
  });

  it('gives a workloadRef Rollout pod-template labels, as kustomize does for a Deployment (so selectors stay whole)', () => {
    // The known cost of matching kustomize's and Argo's `create: true`: Rollgate's validation then
    // reports spec.template on a workloadRef Rollout (docs/sources.md says so).
    const workload = specOf(byName(taught, 'Rollout', 'staging-ro-workload-v2'));
    expect(workload.template?.metadata?.labels).toEqual({ env: 'staging' });
    expect(workload.selector?.matchLabels).toEqual({ app: 'workload', env: 'staging' });
  });

  it('without the configuration, kustomize leaves the Rollout on the old names and the Service selecting nothing', () => {
    const original = new Set(baseNames());
    const stale = new Set(
      writtenNames(untaught)
        .filter(({ text }) => original.has(text))
        .map(({ text }) => text),
    );
    expect(stale).toContain('cm-envfrom');
    expect(stale).toContain('svc-stable');
    expect(stale).toContain('at-step');
    const web = specOf(byName(untaught, 'Rollout', 'staging-ro-web-v2'));
    expect(web.selector?.matchLabels).toEqual({ app: 'web' });
    // kustomize sets images in any kind's containers: the file is not what sets them.
    expect(web.template?.spec?.containers?.[0]?.image).toBe('nginx:1.27');
  });
});

describe('an overlay that sets replicas', () => {
  const files = { ...BASE, ...WITH_REPLICAS };

  it("sets the Rollout's spec.replicas", async () => {
    const rendered = await kustomize(join(materialize(files, everywhere), 'overlays/scaled'));
    expect(specOf(byName(rendered, 'Rollout', 'ro-web')).replicas).toBe(5);
  });

  it('without the configuration, fails: kustomize knows replicas only in workload kinds', async () => {
    await expect(kustomize(join(materialize(files, nowhere), 'overlays/scaled'))).rejects.toThrow(
      /resource with name ro-web does not match a config/,
    );
  });
});

describe('a kustomization that lists a configuration of its own', () => {
  let taught: Rendered[];
  let kustomizationText: string;
  beforeAll(async () => {
    const dir = materialize({ ...BASE, ...WITH_OWN_CONFIGURATION }, everywhere);
    kustomizationText = (await run('cat', [join(dir, 'overlays/own/kustomization.yaml')])).stdout;
    taught = await kustomize(join(dir, 'overlays/own'));
  });

  it("keeps its own entry and comment, with Rollgate's listed after them", () => {
    expect(kustomizationText).toContain('  - widget-references.yaml # our Widget names a ConfigMap\n');
    expect(kustomizationText).toContain(`  - ${ROLLOUT_REFERENCES_FILE_NAME}\n`);
    expect(kustomizationText.indexOf('widget-references.yaml')).toBeLessThan(
      kustomizationText.indexOf(ROLLOUT_REFERENCES_FILE_NAME),
    );
  });

  it("renders with both: its own reference and the Rollout's follow the generated names", () => {
    const widget = byName(taught, 'Widget', 'own-gadget').spec as { settingsName: string };
    expect(widget.settingsName).toBe(renderedName(taught, 'ConfigMap', /^own-widget-settings-/));
    const web = specOf(byName(taught, 'Rollout', 'own-ro-web'));
    expect(web.template?.spec?.containers?.[0]?.envFrom?.[0]?.configMapRef?.name).toBe(
      renderedName(taught, 'ConfigMap', /^own-cm-envfrom-/),
    );
    expect(web.selector?.matchLabels).toEqual({ app: 'web', env: 'own' });
  });
});

describe('a Component', () => {
  const files = { ...BASE, ...WITH_COMPONENT };
  const flagsOf = (objects: Rendered[]): string[] =>
    (
      specOf(byName(objects, 'Rollout', 'ro-web-flags')).template?.spec?.containers?.[0]?.envFrom ?? []
    ).flatMap((source) => (source.configMapRef ? [source.configMapRef.name] : []));

  it('takes the configuration in its own kustomization: its generated ConfigMap reaches the Rollout', async () => {
    const onlyComponent = (dir: string): boolean => dir.startsWith('components/');
    const rendered = await kustomize(join(materialize(files, onlyComponent), 'overlays/flags'));
    expect(flagsOf(rendered)).toContain(renderedName(rendered, 'ConfigMap', /^cm-flags-flags-/));
  });

  it('without it, the Rollout names the ConfigMap by its unsuffixed name', async () => {
    const rendered = await kustomize(join(materialize(files, nowhere), 'overlays/flags'));
    expect(flagsOf(rendered)).toContain('cm-flags');
  });
});
