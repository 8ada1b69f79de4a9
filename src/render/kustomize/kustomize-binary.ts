// Which kustomize renders: the configured binary, else `kustomize` on PATH, else `kubectl kustomize`; and its version.
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A kustomize to run: by absolute path (the render's PATH is empty). */
export interface KustomizeBinary {
  /** Absolute path of the program. */
  path: string;
  /** `kustomize`: `kustomize build DIR`; `kubectl`: `kubectl kustomize DIR` (kubectl's embedded kustomize). */
  command: 'kustomize' | 'kubectl';
  /** The kustomize version (`v5.5.0`), or `unknown` when the program did not say. */
  version: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path of `name` on `path` (a PATH value), if any. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** The version kustomize prints (`v5.4.3`, or `{Version:kustomize/v4.5.7 …}` from older ones). */
export function parseKustomizeVersion(output: string): string {
  return /v\d+\.\d+\.\d+[\w.+-]*/.exec(output)?.[0] ?? 'unknown';
}

/**
 * Versions already asked, by program file: one process may open several renderings (a CLI verb after
 * another, a restart of the run in place, the test suite's scenes), and asking costs a start of the program
 * (~0.1-0.2 s of CPU for kubectl). Keyed by the file's identity and modification time, so a binary
 * replaced in place is asked again.
 */
const knownVersions = new Map<string, Promise<string>>();

function versionOf(path: string, command: KustomizeBinary['command']): Promise<string> {
  let identity: string;
  try {
    const stat = statSync(path);
    identity = `${path}\u0000${command}\u0000${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return askVersion(path, command);
  }
  const known = knownVersions.get(identity);
  if (known !== undefined) return known;
  const asked = askVersion(path, command);
  knownVersions.set(identity, asked);
  // An answer that did not come (a timeout on a loaded machine) is asked again next time.
  void asked.then((version) => {
    if (version === 'unknown') knownVersions.delete(identity);
  });
  return asked;
}

async function askVersion(path: string, command: KustomizeBinary['command']): Promise<string> {
  const env = { PATH: '', HOME: '/nonexistent' };
  try {
    if (command === 'kubectl') {
      const { stdout } = await run(path, ['version', '--client', '-o', 'json'], { env, timeout: 10_000 });
      const parsed = JSON.parse(stdout) as { kustomizeVersion?: unknown };
      return typeof parsed.kustomizeVersion === 'string' ? parsed.kustomizeVersion : 'unknown';
    }
    const { stdout } = await run(path, ['version'], { env, timeout: 10_000 });
    return parseKustomizeVersion(stdout);
  } catch {
    return 'unknown';
  }
}

/**
 * Finds the kustomize to use once, at start: `configured` (render.kustomize.binary; a name ending in
 * `kubectl` is run as `kubectl kustomize`), else `kustomize` on PATH, else `kubectl` on PATH. Undefined
 * when there is none (every kustomize app is then a problem saying so).
 */
export async function findKustomize(
  configured: string | undefined,
  path = process.env.PATH,
): Promise<KustomizeBinary | undefined> {
  let found: { path: string; command: KustomizeBinary['command'] } | undefined;
  if (configured !== undefined && configured !== '') {
    const absolute = isAbsolute(configured) ? configured : findOnPath(configured, path);
    const program = absolute ?? resolve(configured);
    if (!executable(program)) return undefined;
    found = { path: program, command: basename(program).startsWith('kubectl') ? 'kubectl' : 'kustomize' };
  } else {
    const kustomize = findOnPath('kustomize', path);
    const kubectl = kustomize === undefined ? findOnPath('kubectl', path) : undefined;
    if (kustomize !== undefined) found = { path: kustomize, command: 'kustomize' };
    else if (kubectl !== undefined) found = { path: kubectl, command: 'kubectl' };
  }
  if (found === undefined) return undefined;
  return { ...found, version: await versionOf(found.path, found.command) };
}

/** The arguments that build `dir` (relative to the working directory) with no plugin, exec or Helm. */
export function buildArguments(binary: KustomizeBinary, dir: string): string[] {
  const target = dir === '' ? '.' : dir;
  const head = binary.command === 'kubectl' ? ['kustomize', target] : ['build', target];
  return [...head, '--load-restrictor', 'LoadRestrictionsRootOnly'];
}
