// A call a command refuses after parsing: exit code 2 and the reason said exactly once on stderr.
import { describe, expect, it } from 'vitest';
import { runCli as run } from '../../support/run-cli.ts';

describe('usage errors raised by a command', () => {
  it.each([
    [
      ['sandbox', '--port', 'abc'],
      'rollgate sandbox: --port must be an integer between 0 and 65535 (got "abc")\n',
    ],
    [
      ['sandbox', '--conflict-rate', '2'],
      'rollgate sandbox: --conflict-rate must be a number between 0 and 1 (got "2")\n',
    ],
    [['demo', '--port', '-5'], 'rollgate demo: --port must be an integer between 0 and 65535 (got "-5")\n'],
    [
      ['validate', '/nonexistent/manifests'],
      'rollgate validate: no such file or directory: /nonexistent/manifests\n',
    ],
    [
      ['plan', '/nonexistent/rollout.yaml'],
      'rollgate plan: no such file or directory: /nonexistent/rollout.yaml\n',
    ],
    [
      ['plan', 'rollout.yaml', '--from', 'HEAD', '--cluster'],
      'rollgate plan: --from and --cluster exclude each other\n',
    ],
    [['list', 'rollouts', '-A', '-n', 'prod'], 'rollgate list rollouts: -n and -A exclude each other\n'],
  ])('rollgate %j exits 2 and says why once', async (args, said) => {
    const result = await run(...args);
    expect(result).toEqual({ code: 2, stdout: '', stderr: said });
  });

  it('refuses an invalid configuration of run, poller and reconciler before connecting, once', async () => {
    for (const command of ['run', 'poller', 'reconciler']) {
      const result = await run(command, '--set', 'workers.concurrency=0');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        [
          `rollgate ${command}: invalid configuration:`,
          '  command line: workers.concurrency: Too small: expected number to be >=1',
          '',
        ].join('\n'),
      );
    }
  });
});
