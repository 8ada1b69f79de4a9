// deploy/ rendered by the real `kubectl kustomize` (kubectl 1.32's built-in kustomize), as parsed objects.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

/** What the tests read of a rendered object; the rest stays untyped (a parsing boundary). */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** The base and every overlay a user can install, by their directory under the repository root. */
export const INSTALLS = {
  base: 'deploy',
  split: 'deploy/overlays/split',
  'with-redis': 'deploy/overlays/with-redis',
  namespaced: 'deploy/overlays/namespaced',
} as const;

export type InstallName = keyof typeof INSTALLS;

/** The YAML stream `kubectl kustomize DIR` prints (what `kubectl apply -k DIR` would send). */
export async function kustomize(dir: string): Promise<string> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { timeout: 30_000, maxBuffer: 16 << 20 });
  return stdout;
}

export function parseRendered(yamlText: string): RenderedObject[] {
  return parseAllDocuments(yamlText)
    .map((doc) => doc.toJS() as RenderedObject | null)
    .filter((o): o is RenderedObject => o !== null);
}

export async function renderInstall(name: InstallName): Promise<RenderedObject[]> {
  return parseRendered(await kustomize(INSTALLS[name]));
}

/** The API group of an apiVersion ('' for the core group). */
export const groupOf = (apiVersion: string): string =>
  apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
