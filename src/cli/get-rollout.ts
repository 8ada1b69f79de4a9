// `rollgate get rollout`: read (or watch) the cluster, print the tree (`list rollouts` is list-rollouts.ts).
import type { KubeClients } from '../kube/client.ts';
import type { RolloutKey } from '../reconciler/observed-state-reader.ts';
import { readRolloutTree, readRolloutTreeAndSelector } from '../views/read-rollout-tree.ts';
import { findRollout, RolloutNotFoundError } from '../views/rollout-commands.ts';
import { completion } from '../views/rollout-tree.ts';
import { watchPathIn, watchWithRestart, type RunningWatch } from '../kube/watch-with-restart.ts';
import { ROLLOUT_NAME_LABEL } from '../rollout/index.ts';
import { drivenPath, type DrivenApi } from '../manifest/driven-api.ts';
import { ObservedStateReader } from '../reconciler/observed-state-reader.ts';
import { isObjectFormat } from './output-format.ts';
import type { ApiObject } from './print-objects.ts';
import { printRollout, render, type GetOutput, type GetRolloutOptions, type Shown } from './print-rollout.ts';

export type { GetOutput, GetRolloutOptions } from './print-rollout.ts';

/** Clears a terminal and puts the cursor top left, so each redraw replaces the last. */
const CLEAR_SCREEN = '\u001b[H\u001b[2J';
/** On a terminal, ages move on even when nothing else does: the last tree is drawn again this often. */
const AGE_REDRAW_MS = 1_000;

/**
 * Runs `get rollout`: prints once ({@link printRollout}), or (`watch` / `untilComplete`) again on every
 * change the watches on the Rollout, its ReplicaSets, pods and AnalysisRuns report. Returns the exit
 * code: 0, or with `untilComplete` 0 when the rollout becomes Healthy and 1 when it becomes Degraded.
 */
export async function runGetRollout(
  clients: KubeClients,
  key: RolloutKey,
  options: GetRolloutOptions,
  output: GetOutput,
): Promise<number> {
  if (!options.watch && !options.untilComplete) return printRollout(clients, key, options, output);
  // As the verbs: found in either group, refused as ambiguous when in both without --group.
  const { api, live } = await findRollout(clients, key, options.group);
  const first = await readRolloutTreeAndSelector(clients, key, api, live as Record<string, unknown>);
  if (first === undefined) throw new RolloutNotFoundError(key, options.group);
  const shown: Shown = { tree: first.tree, object: live as ApiObject };
  return watchRolloutTree(clients, key, api, first.selector, shown, options, output);
}

async function watchRolloutTree(
  clients: KubeClients,
  key: RolloutKey,
  api: DrivenApi,
  selector: string,
  first: Shown,
  options: GetRolloutOptions,
  output: GetOutput,
): Promise<number> {
  const textual = options.output === 'text' || options.output === 'wide';
  const redraw = output.terminal && textual;
  const objects = isObjectFormat(options.output);
  const reader = new ObservedStateReader(clients, undefined, api);
  let shownJson = '';
  let shown: Shown | undefined;
  let finish: (code: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const show = (next: Shown): void => {
    // An object format prints the Rollout again only when the Rollout changed, as `kubectl get -w` does.
    const json = JSON.stringify(objects ? next.object : next.tree);
    if (json !== shownJson) {
      const later = shownJson !== '';
      shownJson = json;
      shown = next;
      const text = render(next, options, output);
      // Piped, each change is appended; a blank line keeps the trees apart, `---` the YAML documents.
      const separator = !later ? '' : textual ? '\n' : options.output === 'yaml' ? '---\n' : '';
      output.stdout.write(redraw ? `${CLEAR_SCREEN}${text}` : `${separator}${text}`);
    }
    if (options.untilComplete) {
      const state = completion(next.tree);
      if (state !== 'waiting') finish(state === 'healthy' ? 0 : 1);
    }
  };
  show(first);

  // Events only say that something changed: each burst is answered by one fresh read of the whole rollout,
  // so the tree is never pieced together from events that may arrive out of order.
  let reading = false;
  let again = false;
  const reread = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const [tree, object] = await Promise.all([
          readRolloutTree(clients, key, api),
          objects ? reader.readRolloutObject(key) : undefined,
        ]);
        if (tree === undefined) {
          output.stderr.write(`rollgate: rollout ${key.namespace}/${key.name} was deleted\n`);
          finish(1);
          return;
        }
        show({ tree, object: object as ApiObject | undefined });
      } while (again);
    } catch (err) {
      output.stderr.write(
        `rollgate: reading ${key.namespace}/${key.name} failed: ${(err as Error).message}\n`,
      );
    } finally {
      reading = false;
    }
  };
  const onEvent = (): void => {
    void reread();
  };
  const ns = encodeURIComponent(key.namespace);
  // The Rollout and its runs in its own group (`/apis/<group>/v1alpha1/namespaces/<ns>/…`).
  const inGroup = (plural: 'rollouts' | 'analysisRuns'): string =>
    watchPathIn(drivenPath(api, plural), key.namespace);
  const targets: Array<{ path: string; query: Record<string, string> }> = [
    { path: inGroup('rollouts'), query: { fieldSelector: `metadata.name=${key.name}` } },
    { path: `/apis/apps/v1/namespaces/${ns}/replicasets`, query: { labelSelector: selector } },
    { path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: selector } },
    { path: inGroup('analysisRuns'), query: { labelSelector: `${ROLLOUT_NAME_LABEL}=${key.name}` } },
  ];
  const watches: RunningWatch[] = [];
  const onAbort = (): void => finish(0);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) finish(0);
  const ticker = redraw
    ? setInterval(() => {
        if (shown !== undefined) output.stdout.write(`${CLEAR_SCREEN}${render(shown, options, output)}`);
      }, AGE_REDRAW_MS)
    : undefined;
  try {
    for (const target of targets) {
      watches.push(
        await watchWithRestart({
          kubeConfig: clients.kubeConfig,
          path: target.path,
          query: target.query,
          onEvent,
          // A watch that keeps failing (RBAC, an API server away) would otherwise leave a silent, stale tree.
          onEnded: (err, restart) => {
            if (err === undefined || err === null) return;
            const message = err instanceof Error ? err.message : String(err);
            output.stderr.write(
              `rollgate: watch of ${target.path} ended (${message}); reopening in ${Math.round(restart.delayMs / 1000)}s\n`,
            );
          },
          // Events missed while the watch was down are caught up by a fresh read.
          onRestarted: onEvent,
        }),
      );
    }
    // Anything that changed between the first read and the watches starting.
    onEvent();
    return await done;
  } finally {
    clearInterval(ticker);
    options.signal?.removeEventListener('abort', onAbort);
    for (const watch of watches) watch.stop();
  }
}
