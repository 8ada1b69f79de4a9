// `rollgate plan`'s edge: reads the Rollouts of the files, their previous versions (Git ref or cluster), and prints the plans.
import { readFile } from 'node:fs/promises';
import type { ManifestObject } from '../manifest/manifest.ts';
import { parseManifests } from '../manifest/manifest.ts';
import { rolloutSchema, type Rollout } from '../manifest/rollout.ts';
import { planChange } from '../plan/plan-change.ts';
import { formatPlanMarkdown, formatPlanText, type PlanReport } from '../plan/plan-report-text.ts';
import { collectYamlFiles, renderedFileLabel } from './commands/validate.ts';
import type { KubeFlags } from './kube-flags.ts';
import type { PlanApp } from './plan-rendered-apps.ts';

export interface PlanOptions extends KubeFlags {
  /** Compare with the files at this revision of their Git repository. */
  from?: string;
  /** Compare with the live Rollouts. */
  cluster?: boolean;
  output: 'text' | 'markdown' | 'json';
}

export interface PlanOutput {
  stdout: { write(text: string): unknown };
}

/** A file that cannot be planned: unreadable YAML, or a Rollout the schema refuses (exit 1). */
export class PlanInputError extends Error {
  override readonly name = 'PlanInputError';
  readonly code = 'plan.invalid_input';
}

function parseRollout(object: ManifestObject, where: string): Rollout {
  const parsed = rolloutSchema.safeParse(object.value);
  if (parsed.success) return parsed.data as Rollout;
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new PlanInputError(
    `${where}: Rollout ${object.name ?? '(unnamed)'} is invalid (${issues.join('; ')}); \`rollgate validate\` says more`,
  );
}

function rolloutsIn(text: string, file: string, where: string): Rollout[] {
  const parsed = parseManifests(text, file);
  const error = parsed.errors[0];
  if (error !== undefined) throw new PlanInputError(`${where}: ${error.message}`);
  return parsed.objects
    .filter((object) => object.kind === 'Rollout')
    .map((object) => parseRollout(object, where));
}

/** The same Rollout in another version of the manifests: same name and namespace. */
function sameRollout(candidate: Rollout, next: Rollout): boolean {
  return (
    candidate.metadata.name === next.metadata.name &&
    (candidate.metadata.namespace ?? '') === (next.metadata.namespace ?? '')
  );
}

/** Where previous versions come from: a function from (file, Rollout) to the previous Rollout. */
type PreviousLookup = (file: string, next: Rollout) => Promise<Rollout | null | undefined>;

async function gitLookup(revision: string): Promise<PreviousLookup> {
  // isomorphic-git loads only for --from: the other plans (and --help) never pay for it.
  const { readFileAtRevision } = await import('../git/file-at-revision.ts');
  const cache = new Map<string, Promise<Rollout[] | undefined>>();
  return async (file, next) => {
    let rollouts = cache.get(file);
    if (rollouts === undefined) {
      rollouts = readFileAtRevision(file, revision).then((text) =>
        text === undefined ? undefined : rolloutsIn(text, file, `${file} at ${revision}`),
      );
      cache.set(file, rollouts);
    }
    const found = (await rollouts)?.find((candidate) => sameRollout(candidate, next));
    return found ?? null;
  };
}

async function clusterLookup(flags: KubeFlags): Promise<PreviousLookup> {
  const [{ connectKube }, { ObservedStateReader }] = await Promise.all([
    import('../kube/client.ts'),
    import('../reconciler/observed-state-reader.ts'),
  ]);
  const { clients, namespace } = connectKube(flags);
  const reader = new ObservedStateReader(clients);
  return async (_file, next) => {
    const key = { namespace: next.metadata.namespace ?? namespace, name: next.metadata.name };
    const live = await reader.readRolloutObject(key);
    if (live === undefined) return null;
    const parsed = rolloutSchema.safeParse(live);
    if (!parsed.success)
      throw new PlanInputError(
        `the live rollout ${key.namespace}/${key.name} does not match the Rollout schema`,
      );
    return parsed.data as Rollout;
  };
}

/**
 * The plans of the Rollouts an app renders: each against the same Rollout of the app rendered at
 * `--from` (absent there: a new rollout), else through `lookup` (the cluster, or none).
 */
async function planApp(
  app: PlanApp,
  from: string | undefined,
  lookup: PreviousLookup,
  against: string,
): Promise<PlanReport[]> {
  const label = renderedFileLabel(app.file);
  const previous =
    app.previous === undefined || app.previous === null
      ? []
      : rolloutsIn(app.previous, label, `${label} at ${from ?? ''}`);
  const reports: PlanReport[] = [];
  for (const next of rolloutsIn(app.text, label, label)) {
    const before =
      app.previous === undefined
        ? await lookup(app.file, next)
        : (previous.find((candidate) => sameRollout(candidate, next)) ?? null);
    reports.push({ file: app.file, rendered: true, against, plan: planChange(next, before) });
  }
  return reports;
}

/** Runs `plan`: returns the exit code (0; errors are thrown, exit 1). */
export async function runPlan(
  paths: readonly string[],
  options: PlanOptions,
  output: PlanOutput,
): Promise<number> {
  const files = await collectYamlFiles(paths);
  const lookup: PreviousLookup =
    options.from !== undefined
      ? await gitLookup(options.from)
      : options.cluster
        ? await clusterLookup(options)
        : async () => undefined;
  const against = options.from ?? (options.cluster ? 'cluster' : 'none');
  // Files a kustomization reads are planned as the Rollouts their apps render, not as plain YAML.
  const { renderPlanApps } = await import('./plan-rendered-apps.ts');
  const rendered = await renderPlanApps(files, options.from);
  const reports: PlanReport[] = [];
  for (const file of files) {
    const apps = rendered.get(file);
    if (apps !== undefined) {
      for (const app of apps) reports.push(...(await planApp(app, options.from, lookup, against)));
      continue;
    }
    for (const next of rolloutsIn(await readFile(file, 'utf8'), file, file)) {
      reports.push({ file, against, plan: planChange(next, await lookup(file, next)) });
    }
  }
  if (options.output === 'json') output.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  else if (reports.length === 0) output.stdout.write('no Rollout in the files\n');
  else
    output.stdout.write(
      options.output === 'markdown' ? formatPlanMarkdown(reports) : formatPlanText(reports),
    );
  return 0;
}
