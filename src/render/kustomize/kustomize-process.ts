// Runs one `kustomize build` with nothing to reach: empty PATH, proxies to a closed port, Git protocols off, a timeout and an output limit.
import { spawn } from 'node:child_process';
import { RenderFailedError } from '../errors/render-failed-error.ts';
import { RenderOutputTooLargeError } from '../errors/render-output-too-large-error.ts';
import { RenderTimeoutError } from '../errors/render-timeout-error.ts';
import { RendererUnavailableError } from '../errors/renderer-unavailable-error.ts';
import type { KustomizeBinary } from './kustomize-binary.ts';
import { buildArguments } from './kustomize-binary.ts';

/** Where every proxy variable points: nothing listens on port 1 of the loopback, so a request fails at once. */
const CLOSED_PROXY = 'http://127.0.0.1:1';

/** Longest error message kept from kustomize (its stderr can repeat a whole resource). */
export const MAX_MESSAGE_CHARS = 2_000;
/** Stderr read at most (the rest is dropped as it comes). */
const MAX_STDERR_BYTES = 64 * 1024;

/** One render's bounds. */
export interface KustomizeRunLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}

/**
 * The environment of a render: no PATH (the binary is run by absolute path, so kustomize finds no `git`
 * or plugin to exec), HOME and config in the render's own folder, every proxy variable on a closed port,
 * and Git told to use no protocol. Nothing of Rollgate's own environment (credentials) is passed.
 */
export function renderEnvironment(workDir: string): Record<string, string> {
  return {
    PATH: '',
    HOME: workDir,
    XDG_CONFIG_HOME: workDir,
    XDG_CACHE_HOME: workDir,
    KUBECONFIG: '/dev/null',
    HTTP_PROXY: CLOSED_PROXY,
    HTTPS_PROXY: CLOSED_PROXY,
    ALL_PROXY: CLOSED_PROXY,
    http_proxy: CLOSED_PROXY,
    https_proxy: CLOSED_PROXY,
    all_proxy: CLOSED_PROXY,
    NO_PROXY: '',
    no_proxy: '',
    GIT_ALLOW_PROTOCOL: 'none',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}

/**
 * kustomize's message in the user's words: kubectl's log prefix and `Error: ` dropped, the render folder
 * taken out of paths (they read as repository paths), one line, at most {@link MAX_MESSAGE_CHARS}.
 */
export function kustomizeMessage(stderr: string, workDir: string): string {
  let text = stderr.trim();
  const logged = /"command failed" err="((?:[^"\\]|\\.)*)"/.exec(text);
  if (logged?.[1] !== undefined) {
    try {
      text = JSON.parse(`"${logged[1]}"`) as string;
    } catch {
      text = logged[1];
    }
  }
  text = text
    .replace(/^Error:\s*/, '')
    .split(`${workDir}/`)
    .join('')
    .split(workDir)
    .join('.')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  if (text === '') text = 'kustomize failed without a message';
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}

/**
 * Builds the kustomization in `dir` (relative to `workDir`, which holds the materialized inputs) and
 * returns its output. The process is killed when it passes the timeout or the output limit: what was read
 * is dropped, so memory stays within the limit. `file` is what errors are reported at.
 */
export function runKustomize(
  binary: KustomizeBinary,
  workDir: string,
  dir: string,
  file: string,
  limits: KustomizeRunLimits,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary.path, buildArguments(binary, dir), {
      cwd: workDir,
      env: renderEnvironment(workDir),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    const err: Buffer[] = [];
    let errBytes = 0;
    let failure: Error | undefined;
    const stop = (error: Error): void => {
      if (failure !== undefined) return;
      failure = error;
      out.length = 0;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new RenderTimeoutError(file, limits.timeoutMs)), limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (failure !== undefined) return;
      outBytes += chunk.length;
      if (outBytes > limits.maxOutputBytes) stop(new RenderOutputTooLargeError(file, limits.maxOutputBytes));
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes >= MAX_STDERR_BYTES) return;
      err.push(chunk.subarray(0, MAX_STDERR_BYTES - errBytes));
      errBytes += chunk.length;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(
        new RendererUnavailableError(`${binary.path} could not be started: ${error.message}`, file, {
          cause: error,
        }),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure !== undefined) return reject(failure);
      if (code !== 0)
        return reject(
          new RenderFailedError(kustomizeMessage(Buffer.concat(err).toString('utf8'), workDir), file, code),
        );
      resolve(Buffer.concat(out).toString('utf8'));
    });
  });
}
