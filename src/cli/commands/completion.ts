// `rollgate completion bash|zsh|fish`: the shell's completion script; `rollgate complete -- WORDS…` (hidden) answers it.
import type { Command } from 'commander';
import { Argument } from 'commander';
import type { KubeClients } from '../../kube/client.ts';
import type { NameSource } from '../shell-completion.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** A TAB must not wait on an API server that does not answer: after this, no names are offered. */
const NAME_LOOKUP_TIMEOUT_MS = 3_000;

/** Set when a name lookup was given up: its request may still hold the process open. */
let lookupAbandoned = false;

/** An object kind's lister: the items of a namespace, both groups. */
type NameLister = (
  clients: KubeClients,
  namespace: string,
) => Promise<Array<{ metadata?: { name?: string } }>>;

/** The names `list` gives in the namespace the words name with -n, else the context's. */
async function namesIn(words: readonly string[], list: NameLister): Promise<string[]> {
  const [{ connectKube }, { flagValue }] = await Promise.all([
    import('../../kube/client.ts'),
    import('../shell-completion.ts'),
  ]);
  const flag = (long: string, short?: string): Record<string, string> => {
    const value = flagValue(words, long, short);
    return value === undefined ? {} : { [long]: value };
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const { clients, namespace } = connectKube({
      ...flag('kubeconfig'),
      ...flag('context'),
      ...flag('namespace', 'n'),
    });
    const timeout = new Promise<never[]>((resolve) => {
      timer = setTimeout(() => {
        lookupAbandoned = true;
        resolve([]);
      }, NAME_LOOKUP_TIMEOUT_MS);
    });
    const items = await Promise.race([list(clients, namespace), timeout]);
    return [...new Set(items.map((item) => item.metadata?.name ?? '').filter((name) => name !== ''))].sort();
  } catch {
    // No kubeconfig, a refused connection, RBAC: a TAB offers nothing rather than an error.
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/** The Rollouts (both groups) of the namespace the words name with -n, else the context's. */
async function rolloutNames(words: readonly string[]): Promise<string[]> {
  const { BOTH_APIS, listRolloutsIn } = await import('../../views/rollout-list.ts');
  return namesIn(words, (clients, namespace) => listRolloutsIn(clients, namespace, BOTH_APIS));
}

/** The Experiments (both groups) of the namespace the words name with -n, else the context's. */
async function experimentNames(words: readonly string[]): Promise<string[]> {
  const { listExperimentsIn } = await import('../../views/experiment-reads.ts');
  return namesIn(
    words,
    async (clients, namespace) =>
      (await listExperimentsIn(clients, namespace)) as Array<{ metadata?: { name?: string } }>,
  );
}

/** The arguments completed from the cluster, by their help text (see NameSource). */
const NAME_SOURCES: readonly NameSource[] = [
  { description: 'rollout name', list: rolloutNames },
  { description: 'experiment name', list: experimentNames },
];

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description(
      'print the shell completion script (verbs, flags, rollout and experiment names): source <(rollgate completion bash)',
    )
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: (typeof SHELLS)[number]) => {
      const { completionScript } = await import('../shell-completion.ts');
      process.stdout.write(completionScript(shell, 'rollgate'));
    });
  // What the scripts call on every TAB (and kubectl's plugin completion, through kubectl_complete-rollgate).
  program
    .command('complete', { hidden: true })
    .description('answer a completion request: complete -- WORDS…')
    .argument('[words...]', 'the words on the command line after rollgate, the last one being completed')
    .helpOption(false)
    .allowUnknownOption()
    .action(async (words: string[]) => {
      const { completeWords } = await import('../shell-completion.ts');
      process.stdout.write(await completeWords(program, words, NAME_SOURCES));
      // A request to an API server that never answered must not keep the shell waiting for its TAB.
      if (lookupAbandoned) process.stdout.write('', () => process.exit(0));
    });
}
