// `rollgate get rollout` drawn once: the tree (or the Rollout in an object format) from one read of the
// cluster. Apart from get-rollout.ts, whose watches load client-node: this needs only the read clients,
// which the CLI serves without it for a simple kubeconfig (plain-kube-clients.ts).
import type { ObjectReadClients } from '../kube/object-read-clients.ts';
import type { DrivenGroup } from '../manifest/driven-api.ts';
import { preloadRolloutSchema } from '../reconciler/observed-state-reader.ts';
import type { RolloutKey } from '../reconciler/rollout-key.ts';
import { readRolloutTreeAndSelector } from '../views/read-rollout-tree.ts';
import { findRollout, RolloutNotFoundError } from '../views/rollout-commands.ts';
import type { RolloutTree } from '../views/rollout-tree.ts';
import { formatRolloutTree } from '../views/rollout-tree-text.ts';
import { isObjectFormat, type ViewOutputFormat } from './output-format.ts';
import { formatObject, type ApiObject } from './print-objects.ts';
import type { TerminalOutput } from './terminal-output.ts';

/** Where the command writes, whether it draws for a terminal, and its clock (tests pass their own). */
export type GetOutput = TerminalOutput;

export interface GetRolloutOptions {
  output: ViewOutputFormat;
  /** With -o json|yaml: keep metadata.managedFields. */
  showManagedFields?: boolean;
  watch?: boolean;
  untilComplete?: boolean;
  /** Ends a watch (Ctrl-C in the CLI); the command then exits 0. */
  signal?: AbortSignal;
  /** The Rollout's group (`--group`); unset, whichever of rollgate.dev and argoproj.io has it. */
  group?: DrivenGroup;
}

/** What one draw shows: the tree, and the Rollout as read when an object format prints it. */
export interface Shown {
  tree: RolloutTree;
  object?: ApiObject | undefined;
}

export function render(shown: Shown, options: GetRolloutOptions, output: GetOutput): string {
  if (isObjectFormat(options.output))
    return shown.object === undefined
      ? ''
      : formatObject(shown.object, options.output, { showManagedFields: options.showManagedFields === true });
  return options.output === 'view-json'
    ? `${JSON.stringify(shown.tree, null, 2)}\n`
    : formatRolloutTree(shown.tree, {
        now: output.now(),
        color: output.terminal,
        wide: options.output === 'wide',
      });
}

/**
 * Prints the rollout once; the exit code is 0. The Rollout is read once (found in either group, refused
 * as ambiguous when in both without --group, as the verbs find it) and its ReplicaSets, pods, Services
 * and AnalysisRuns are read together: two round trips.
 */
export async function printRollout(
  clients: ObjectReadClients,
  key: RolloutKey,
  options: GetRolloutOptions,
  output: GetOutput,
): Promise<number> {
  const finding = findRollout(clients, key, options.group);
  // The schema's module loads while the Rollout is being fetched (an object format needs no tree).
  if (!isObjectFormat(options.output)) preloadRolloutSchema();
  const { api, live } = await finding;
  if (isObjectFormat(options.output)) {
    // The object as the API server returned it: no tree to read.
    output.stdout.write(
      formatObject(live as ApiObject, options.output, {
        showManagedFields: options.showManagedFields === true,
      }),
    );
    return 0;
  }
  const first = await readRolloutTreeAndSelector(clients, key, api, live as Record<string, unknown>);
  if (first === undefined) throw new RolloutNotFoundError(key, options.group);
  output.stdout.write(render({ tree: first.tree, object: live as ApiObject }, options, output));
  return 0;
}
