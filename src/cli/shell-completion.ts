// Shell completion: the scripts of @bomb.sh/tab (bash, zsh, fish) and its answers, from commander's command tree.
import type { Command } from 'commander';
import type { Command as TabCommand } from '@bomb.sh/tab';
import { RootCommand, script, ShellCompDirective } from '@bomb.sh/tab';

/** The shells `rollgate completion` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/**
 * Arguments whose values come from the cluster, by their help text as commands register them: a verb's
 * `.argument('<name>', 'rollout name')` completes the Rollouts' names with no line here. A new kind of
 * name (an experiment's) is a row.
 */
export interface NameSource {
  /** The argument's description in commander. */
  description: string;
  /** The names in the namespace the words name (or the context's); never throws, may be slow. */
  list: (words: readonly string[]) => Promise<string[]>;
}

/** An option whose value (`<file>`) or an argument whose name (`path`, `file`) is a path: the shell completes files. */
const FILE_VALUE = /file|path|dir/i;

/** Writes `text` where the library prints with console.log; returns what it printed. */
function printedBy(print: () => void): string {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => lines.push(parts.map(String).join(' '));
  try {
    print();
  } finally {
    console.log = log;
  }
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * The completion script for `shell`, calling back `rollgate complete -- WORDS…`. Bash gets two changes to
 * the library's script: it works without the bash-completion package (the words as bash split them), and it
 * falls back to file names where the answer allows files (`complete -o default`, as cobra's scripts do);
 * the library's shared names are no longer `readonly`, so sourcing it twice says nothing.
 */
export function completionScript(shell: CompletionShell, program: string): string {
  const text = printedBy(() => script(shell, program, program));
  if (shell !== 'bash') return text;
  return replaceOnce(
    replaceOnce(
      text.replaceAll('readonly ShellCompDirective', 'ShellCompDirective'),
      '    _get_comp_words_by_ref -n "=:" cur prev words cword\n',
      [
        '    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then',
        '        _get_comp_words_by_ref -n "=:" cur prev words cword',
        '    else',
        '        # Without the bash-completion package: the words as bash split them.',
        '        words=("${COMP_WORDS[@]}")',
        '        cword=$COMP_CWORD',
        '        cur=${COMP_WORDS[COMP_CWORD]}',
        '        prev=${COMP_WORDS[COMP_CWORD-1]}',
        '    fi',
        '',
      ].join('\n'),
    ),
    `complete -F __${program}_complete ${program}`,
    `complete -o default -F __${program}_complete ${program}`,
  );
}

/** `text` with `from` replaced once; a library whose script no longer holds it fails loudly here, not in a shell. */
function replaceOnce(text: string, from: string, to: string): string {
  if (!text.includes(from))
    throw new Error(`the completion script no longer contains ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

/** What the tree's handlers noticed while the library matched the words. */
interface Wanted {
  files: boolean;
  names?: NameSource;
}

/** Every visible command under `command`, by its path of names (each alias a path of its own). */
function visibleCommands(command: Command, path: string[], out: Array<[string[], Command]>): void {
  for (const sub of command.commands) {
    if ((sub as unknown as { _hidden?: boolean })._hidden === true) continue;
    for (const name of [sub.name(), ...sub.aliases()]) {
      const subPath = [...path, name];
      out.push([subPath, sub]);
      visibleCommands(sub, subPath, out);
    }
  }
}

/** The library's tree from commander's: commands, their options (choices offered) and arguments. */
function completionTree(
  program: Command,
  wanted: Wanted,
  sources: readonly NameSource[],
  names: readonly string[],
): RootCommand {
  const root = new RootCommand();
  // Each command's options end where its subcommand starts (main.ts enables positional options).
  root.optionLookupMode = 'local';
  const describe = (target: TabCommand, command: Command): void => {
    for (const option of command.options) {
      if (option.hidden || option.long === undefined) continue;
      const long = option.long.slice(2);
      const short = option.short?.slice(1);
      const takesValue = option.required || option.optional;
      if (!takesValue) {
        target.option(long, option.description, short);
        continue;
      }
      const choices = option.argChoices ?? [];
      const files = choices.length === 0 && FILE_VALUE.test(option.flags);
      target.option(
        long,
        option.description,
        (complete) => {
          for (const choice of choices) complete(choice, '');
          if (files) wanted.files = true;
        },
        short,
      );
    }
    for (const argument of command.registeredArguments) {
      const source = sources.find((candidate) => candidate.description === argument.description);
      const choices = argument.argChoices ?? [];
      const files = source === undefined && choices.length === 0 && FILE_VALUE.test(argument.name());
      target.argument(
        argument.name(),
        (complete) => {
          for (const choice of choices) complete(choice, '');
          if (files) wanted.files = true;
          if (source !== undefined) {
            wanted.names = source;
            for (const name of names) complete(name, '');
          }
        },
        argument.variadic,
      );
    }
  };
  describe(root, program);
  const commands: Array<[string[], Command]> = [];
  visibleCommands(program, [], commands);
  for (const [path, command] of commands)
    describe(root.command(path.join(' '), command.description()), command);
  return root;
}

/** The library's answer to `words`, with the directive made ours: files allowed where a path is asked. */
function answer(root: RootCommand, words: readonly string[], wanted: Wanted): string {
  const printed = printedBy(() => root.parse([...words]));
  const lines = printed.split('\n').filter((line) => line !== '');
  const values = lines.slice(0, -1);
  // The library always says "no files"; where a path is asked and nothing else is offered, the shell completes files.
  const directive =
    wanted.files && values.length === 0
      ? ShellCompDirective.ShellCompDirectiveDefault
      : ShellCompDirective.ShellCompDirectiveNoFileComp;
  return [...values, `:${directive}`].map((line) => `${line}\n`).join('');
}

/**
 * What `rollgate complete -- WORDS…` prints: one `value<TAB>description` line per completion of the last
 * word, then `:DIRECTIVE` (cobra's protocol, which kubectl's plugin completion speaks too). Names from the
 * cluster are asked only when the last word is such a name.
 */
export async function completeWords(
  program: Command,
  words: readonly string[],
  sources: readonly NameSource[],
): Promise<string> {
  const first: Wanted = { files: false };
  // The library matches the words once to say what the last one is; only a name asks the cluster.
  const probe = answer(completionTree(program, first, sources, []), words, first);
  if (first.names === undefined) return probe;
  const names = await first.names.list(words);
  const second: Wanted = { files: false };
  return answer(completionTree(program, second, sources, names), words, second);
}

/** The value of `--flag V`, `--flag=V` or `-f V` in `words` (the last one given), if any. */
export function flagValue(words: readonly string[], long: string, short?: string): string | undefined {
  let value: string | undefined;
  words.forEach((word, index) => {
    if (word === `--${long}` || (short !== undefined && word === `-${short}`)) value = words[index + 1];
    else if (word.startsWith(`--${long}=`)) value = word.slice(long.length + 3);
  });
  return value === '' ? undefined : value;
}
