// `rollgate validate <path...> [--output text|json]`: checks Rollout and analysis manifests offline.
import { Option, type Command } from 'commander';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ParsedManifests } from '../../manifest/manifest.ts';
import type { ObjectValidation, ValidationReport } from '../../manifest/validate.ts';
import type { RenderMode } from '../../render/app-discovery.ts';
import type { KustomizeBinary } from '../../render/kustomize/kustomize-binary.ts';
import type { RenderProblem } from '../../render/render-problem.ts';
import { findRenderer, renderFolder } from '../rendered-folders.ts';
import { usageError } from '../usage-error.ts';

/** Folders never walked into: VCS metadata and dependency trees. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
const YAML_FILE = /\.ya?ml$/i;

export interface ValidateOptions {
  output: 'text' | 'json';
  /** How folders are read (as a source's `render`): `auto` renders the kustomizations found (default). */
  render?: RenderMode;
}

/** The marker of a kustomization among the YAML files of a folder: only then is kustomize looked for. */
const KUSTOMIZATION_FILE = /^kustomization\.ya?ml$/;

/** What a rendered app's objects are reported at: its kustomization file, marked as rendered output. */
export function renderedFileLabel(kustomizationFile: string): string {
  return `${kustomizationFile} (rendered)`;
}

/** Where the command writes; the CLI passes process streams, tests pass buffers. */
export interface ValidateOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A path given on the command line that does not exist. */
export class ValidatePathError extends Error {
  override readonly name = 'ValidatePathError';
  readonly code = 'rollgate.validate.path';

  constructor(readonly path: string) {
    super(`no such file or directory: ${path}`);
  }
}

/**
 * Lists the YAML files under the given paths: a file is taken as given (whatever its extension), a
 * folder is walked recursively for `.yaml`/`.yml` files (skipping .git and node_modules, following
 * symlinks once). Sorted per folder so output is stable.
 */
export async function collectYamlFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seenDirectories = new Set<string>();
  const walk = async (directory: string): Promise<void> => {
    const real = await realpath(directory);
    if (seenDirectories.has(real)) return;
    seenDirectories.add(real);
    const entries = (await readdir(directory)).sort();
    for (const entry of entries) {
      const full = join(directory, entry);
      const info = await stat(full).catch(() => undefined);
      if (info === undefined) continue;
      if (info.isDirectory()) {
        if (!SKIPPED_DIRECTORIES.has(entry)) await walk(full);
      } else if (info.isFile() && YAML_FILE.test(entry)) {
        files.push(full);
      }
    }
  };
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) throw new ValidatePathError(path);
    if (info.isDirectory()) await walk(path);
    else files.push(path);
  }
  return files;
}

/** A render problem as a reported entry: invalid, at the kustomization's file and line. */
function renderProblemEntry(problem: RenderProblem, file: string): ObjectValidation {
  return {
    file,
    line: problem.line,
    col: 1,
    apiVersion: null,
    kind: null,
    name: null,
    namespace: null,
    valid: false,
    errors: [{ path: '', line: problem.line, col: 1, message: problem.message }],
    warnings: [],
  };
}

/** Reports added together: objects and skipped documents in order, the summaries summed. */
function mergeReports(reports: readonly ValidationReport[]): ValidationReport {
  const merged: ValidationReport = {
    objects: [],
    skipped: [],
    summary: { valid: 0, invalid: 0, skipped: 0 },
  };
  for (const report of reports) {
    merged.objects.push(...report.objects);
    merged.skipped.push(...report.skipped);
    merged.summary.valid += report.summary.valid;
    merged.summary.invalid += report.summary.invalid;
    merged.summary.skipped += report.summary.skipped;
  }
  return merged;
}

/**
 * Validates the files under `paths` and returns the report. A folder is read as a source with
 * `render: mode` reads its path: each kustomization root found is rendered and its output validated on its
 * own (duplicates and the generated-name check within the app), the YAML files at or below a
 * kustomization's folder are not read as plain manifests, and a render that fails is an invalid entry at
 * the kustomization's file. The other files are validated together, as before. A file named on the
 * command line is read as plain YAML.
 */
export async function validatePaths(
  paths: readonly string[],
  mode: RenderMode = 'auto',
): Promise<ValidationReport> {
  // The YAML parser and the schemas load here, not with the module: `rollgate --help` registers this
  // command too.
  const [{ parseManifests }, { validateParsedManifests }] = await Promise.all([
    import('../../manifest/manifest.ts'),
    import('../../manifest/validate.ts'),
  ]);
  const plain: string[] = [];
  const apps: ParsedManifests[] = [];
  const unrendered: ObjectValidation[] = [];
  let binary: Promise<KustomizeBinary | undefined> | undefined;
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) throw new ValidatePathError(path);
    const files = await collectYamlFiles([path]);
    const mayRender =
      info.isDirectory() &&
      mode !== 'plain' &&
      (mode === 'kustomize' ||
        files.some((file) => KUSTOMIZATION_FILE.test(basename(file)) || basename(file) === 'Chart.yaml'));
    if (!mayRender) {
      plain.push(...files);
      continue;
    }
    binary ??= findRenderer();
    const folder = await renderFolder(path, mode, await binary);
    plain.push(...files.filter((file) => !folder.isCovered(file)));
    for (const problem of folder.problems) unrendered.push(renderProblemEntry(problem, problem.shownFile));
    for (const app of folder.apps) {
      if (app.outcome.ok) apps.push(parseManifests(app.outcome.text, renderedFileLabel(app.shownFile)));
      else
        for (const problem of app.outcome.problems)
          unrendered.push(renderProblemEntry(problem, folder.show(problem.file)));
    }
  }
  const parsed = await Promise.all(
    plain.map(async (file) => parseManifests(await readFile(file, 'utf8'), file)),
  );
  const rendered: ValidationReport = {
    objects: unrendered,
    skipped: [],
    summary: { valid: 0, invalid: unrendered.length, skipped: 0 },
  };
  return mergeReports([
    validateParsedManifests(parsed),
    ...apps.map((app) => validateParsedManifests([app])),
    rendered,
  ]);
}

function objectLabel(object: ObjectValidation): string | undefined {
  if (object.kind === null) return undefined;
  return `${object.kind}/${object.name ?? '(unnamed)'}`;
}

/** One line per problem (`file:line:col: kind/name: field.path: message`), notes, then a summary line. */
export function formatValidationText(report: ValidationReport): string {
  const lines: string[] = [];
  let warnings = 0;
  for (const object of report.objects) {
    const label = objectLabel(object);
    const problems: Array<{ line: number; col: number; text: string }> = [];
    const emit = (
      issue: { path: string; line: number; col: number; message: string },
      prefix: string,
    ): void => {
      const parts = [`${object.file}:${issue.line}:${issue.col}`];
      if (label !== undefined) parts.push(label);
      if (issue.path !== '') parts.push(issue.path);
      parts.push(prefix + issue.message);
      problems.push({ line: issue.line, col: issue.col, text: parts.join(': ') });
    };
    for (const issue of object.errors) emit(issue, '');
    for (const issue of object.warnings) emit(issue, 'warning: ');
    // Within an object, problems read top to bottom, as the file does.
    problems.sort((a, b) => a.line - b.line || a.col - b.col);
    lines.push(...problems.map((problem) => problem.text));
    warnings += object.warnings.length;
  }
  // Plain Kubernetes objects (Services, Ingresses, …) are expected beside Rollouts: count them in one
  // note. Documents that are not Kubernetes objects, and Argo kinds we do not handle, get their own.
  const otherKinds = new Map<string, number>();
  for (const skipped of report.skipped) {
    const argoGroup =
      skipped.apiVersion !== null && /^(argoproj\.io|rollgate\.dev)\//.test(skipped.apiVersion);
    if (skipped.kind === null || argoGroup) {
      const what = skipped.kind === null ? '' : `${skipped.kind}/${skipped.name ?? '(unnamed)'}: `;
      lines.push(`${skipped.file}:${skipped.line}:${skipped.col}: note: skipped ${what}${skipped.reason}`);
    } else {
      otherKinds.set(skipped.kind, (otherKinds.get(skipped.kind) ?? 0) + 1);
    }
  }
  if (otherKinds.size > 0) {
    const kinds = [...otherKinds.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([kind, count]) => (count === 1 ? kind : `${kind} ×${count}`));
    const total = [...otherKinds.values()].reduce((sum, count) => sum + count, 0);
    lines.push(
      `note: skipped ${total} object${total === 1 ? '' : 's'} of kinds Rollgate does not validate (${kinds.join(', ')})`,
    );
  }
  const { valid, invalid, skipped } = report.summary;
  const checked = valid + invalid;
  lines.push(
    `${checked} object${checked === 1 ? '' : 's'} checked: ${valid} valid, ${invalid} invalid, ${skipped} skipped` +
      (warnings > 0 ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''),
  );
  return `${lines.join('\n')}\n`;
}

/** The `--output json` document: objects, skipped documents and the summary. */
export function formatValidationJson(report: ValidationReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/**
 * Runs the command: returns the exit code (0 no invalid object, 1 some invalid). A missing path is
 * a usage error: said on `output.stderr` and thrown (exit code 2).
 */
export async function runValidate(
  paths: readonly string[],
  options: ValidateOptions,
  output: ValidateOutput,
): Promise<number> {
  let report: ValidationReport;
  try {
    report = await validatePaths(paths, options.render ?? 'auto');
  } catch (err) {
    if (err instanceof ValidatePathError) throw usageError('validate', err.message, output.stderr);
    throw err;
  }
  output.stdout.write(
    options.output === 'json' ? formatValidationJson(report) : formatValidationText(report),
  );
  return report.summary.invalid > 0 ? 1 : 0;
}

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('check Rollout / AnalysisTemplate manifests offline (files, or folders of .yaml/.yml)')
    .argument('<path...>', 'files or folders to validate')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(
      new Option(
        '--render <mode>',
        'how folders are read: auto renders the kustomizations found, as a source does',
      )
        .choices(['auto', 'plain', 'kustomize'])
        .default('auto'),
    )
    .action(async (paths: string[], options: ValidateOptions) => {
      process.exitCode = await runValidate(paths, options, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });
}
