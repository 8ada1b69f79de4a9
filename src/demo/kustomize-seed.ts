// The demo's copy of examples/kustomize (a base, a staging and a prod overlay), read at run time and paced for the demo.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
import { DemoScenarioError } from './demo-scenario-error.ts';

/** Where the layout sits, the same in examples/kustomize/ and in the demo's repository. */
export const KUSTOMIZE_LAYOUT = {
  base: 'apps/web/base',
  staging: 'apps/web/overlays/staging',
  prod: 'apps/web/overlays/prod',
} as const;

/** How long each pause of the demo's copy lasts: the example's pause for minutes or for a person. */
const DEMO_PAUSE = '1s';

/** The image every overlay's `images:` entry names (the base Rollout's image without its tag). */
export const KUSTOMIZE_IMAGE = 'ghcr.io/rollgate/web';

function seedError(file: string, message: string): DemoScenarioError {
  return new DemoScenarioError('seed', `examples/kustomize/${file}: ${message}`);
}

/**
 * The canary steps as the demo walks them: the example's weights in order, each pause 1 s, and no analysis
 * step, since its query needs a Prometheus the sandbox does not have. Pure, so the rule is tested alone.
 */
export function demoSteps(steps: readonly unknown[]): Array<Record<string, unknown>> {
  const paced: Array<Record<string, unknown>> = [];
  for (const step of steps) {
    if (step === null || typeof step !== 'object') continue;
    if ('setWeight' in step) paced.push({ setWeight: step.setWeight });
    else if ('pause' in step) paced.push({ pause: { duration: DEMO_PAUSE } });
  }
  return paced;
}

/** The base Rollout's text with {@link demoSteps}; its other fields and comments are kept. */
export function paceRollout(text: string, file = `${KUSTOMIZE_LAYOUT.base}/rollout.yaml`): string {
  const doc = parseDocument(text);
  const steps = doc.getIn(['spec', 'strategy', 'canary', 'steps']);
  if (doc.errors.length > 0 || !isSeq(steps))
    throw seedError(file, 'expected a Rollout with spec.strategy.canary.steps');
  const paced = doc.createNode(demoSteps(steps.toJSON() as unknown[]));
  paced.commentBefore =
    " rollgate demo: the example's weights, every pause 1 s, no analysis step (the sandbox has no Prometheus)";
  doc.setIn(['spec', 'strategy', 'canary', 'steps'], paced);
  return doc.toString();
}

const NEW_TAG_LINE = /^(\s*newTag:\s*)(\S+)(.*)$/;

/** The `newTag` of the `images:` entry for `image` in a kustomization's text. */
export function imageTagIn(text: string, image: string): string | undefined {
  const doc = parseDocument(text);
  const images = doc.get('images');
  if (!isSeq(images)) return undefined;
  for (const entry of images.items)
    if (isMap(entry) && entry.get('name') === image) {
      const tag = entry.get('newTag');
      return tag === undefined || tag === null ? undefined : String(tag);
    }
  return undefined;
}

/**
 * The kustomization's text with the `newTag` of the `images:` entry for `image` set to `tag`, as a person
 * edits it: that one line changes, every other byte stays. Throws when there is no such entry.
 */
export function withImageTag(text: string, image: string, tag: string, file: string): string {
  const lines = text.split('\n');
  const name = new RegExp(`^\\s*-?\\s*name:\\s*${image.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s*$`);
  const entry = lines.findIndex((line) => name.test(line));
  if (entry === -1) throw seedError(file, `no images: entry named ${image}`);
  for (let i = entry + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*-/.test(line) || /^\S/.test(line)) break;
    const match = NEW_TAG_LINE.exec(line);
    if (match) {
      lines[i] = `${match[1] ?? ''}${tag}${match[3] ?? ''}`;
      return lines.join('\n');
    }
  }
  throw seedError(file, `the images: entry ${image} has no newTag`);
}

/**
 * Copies examples/kustomize/apps into `workDir` (the demo repository's first commit) with the two changes
 * the demo needs, both made here so the example itself cannot drift from the demo: the base Rollout's steps
 * paced ({@link paceRollout}), and prod's tag set to staging's, so the story starts with nothing to promote.
 * Returns the tag both overlays start on.
 */
export async function seedKustomizeLayout(exampleDir: string, workDir: string): Promise<string> {
  await cp(join(exampleDir, 'apps'), join(workDir, 'apps'), { recursive: true });
  const rollout = join(workDir, KUSTOMIZE_LAYOUT.base, 'rollout.yaml');
  await writeFile(rollout, paceRollout(await readFile(rollout, 'utf8')));
  const stagingFile = `${KUSTOMIZE_LAYOUT.staging}/kustomization.yaml`;
  const prodFile = `${KUSTOMIZE_LAYOUT.prod}/kustomization.yaml`;
  const tag = imageTagIn(await readFile(join(workDir, stagingFile), 'utf8'), KUSTOMIZE_IMAGE);
  if (tag === undefined)
    throw seedError(stagingFile, `no images: entry with a newTag for ${KUSTOMIZE_IMAGE}`);
  const prod = join(workDir, prodFile);
  await writeFile(prod, withImageTag(await readFile(prod, 'utf8'), KUSTOMIZE_IMAGE, tag, prodFile));
  return tag;
}
