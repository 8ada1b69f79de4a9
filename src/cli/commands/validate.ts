// `rollgate validate <path...> [--output text|json]`: checks Rollout and analysis manifests offline.
import { Option, type Command } from 'commander';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectValidation, ValidationReport } from '../../manifest/validate.ts';
import { usageError } from '../usage-error.ts';

/** Folders never walked into: VCS metadata and dependency trees. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
const YAML_FILE = /\.ya?ml$/i;

export interface ValidateOptions {
  output: 'text' | 'json';
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

/** Validates the files under `paths` and returns the report. */
export async function validatePaths(paths: readonly string[]): Promise<ValidationReport> {
  const files = await collectYamlFiles(paths);
  // The YAML parser and the schemas load here, not with the module: `rollgate --help` registers this
  // command too.
  const [{ parseManifests }, { validateParsedManifests }] = await Promise.all([
    import('../../manifest/manifest.ts'),
    import('../../manifest/validate.ts'),
  ]);
  const parsed = await Promise.all(
    files.map(async (file) => parseManifests(await readFile(file, 'utf8'), file)),
  );
  return validateParsedManifests(parsed);
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
    report = await validatePaths(paths);
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
    .action(async (paths: string[], options: ValidateOptions) => {
      process.exitCode = await runValidate(paths, options, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
    });
}
