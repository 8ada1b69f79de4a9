// `rollgate sandbox`: serves a simulated Kubernetes API in the foreground and writes a kubeconfig for it.
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { parseNumberFlag, type NumberRange } from '../number-flag.ts';

interface SandboxCommandOptions {
  port: string;
  host: string;
  kubeconfig: string;
  conflictRate: string;
  errorRate: string;
  latencyMs: string;
  seed?: string;
  missingImage: string[];
  readyDelayMs: string;
  token?: string;
  rbac?: boolean;
}

const parseNumber = (flag: string, text: string, range: NumberRange): number =>
  parseNumberFlag('sandbox', flag, text, range);

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Registers `rollgate sandbox`. */
export function registerSandboxCommand(program: Command): void {
  const sandboxCommand = program
    .command('sandbox')
    .description(
      'serve a simulated Kubernetes API (with ReplicaSet, Job and kubelet simulation) for kubectl and Rollgate',
    )
    .option('--port <port>', 'TCP port to listen on', '6443')
    .option('--host <host>', 'address to bind (loopback unless told otherwise)', '127.0.0.1')
    .option('--kubeconfig <file>', 'where to write the kubeconfig', '.rollgate/sandbox.kubeconfig')
    .option('--conflict-rate <rate>', 'share of update requests answered 409 Conflict (0..1)', '0')
    .option('--error-rate <rate>', 'share of requests answered 500 (0..1)', '0')
    .option('--latency-ms <ms>', 'delay added to every request', '0')
    .option('--seed <n>', 'seed for names, uids and injected faults')
    .option('--missing-image <pattern>', 'image glob the registry lacks (repeatable)', collect, [])
    .option('--ready-delay-ms <ms>', 'how long healthy pods take to become Ready', '1000')
    .addOption(new Option('--token <token>', 'require this bearer token').env('ROLLGATE_SANDBOX_TOKEN'))
    .option('--rbac', 'authorize ServiceAccount tokens against the stored Roles and bindings (RBAC mode)')
    .action(async (opts: SandboxCommandOptions) => {
      // Every flag is checked before the sandbox and its logger are loaded: a typo answers at once.
      const options = {
        port: parseNumber('port', opts.port, { min: 0, max: 65535, integer: true }),
        host: opts.host,
        faults: {
          conflictRate: parseNumber('conflict-rate', opts.conflictRate, { min: 0, max: 1 }),
          errorRate: parseNumber('error-rate', opts.errorRate, { min: 0, max: 1 }),
          latencyMs: parseNumber('latency-ms', opts.latencyMs, { min: 0, integer: true }),
        },
        ...(opts.seed !== undefined
          ? { seed: parseNumber('seed', opts.seed, { min: 0, integer: true }) }
          : {}),
        missingImages: opts.missingImage,
        readyDelayMs: parseNumber('ready-delay-ms', opts.readyDelayMs, { min: 0, integer: true }),
        ...(opts.token !== undefined ? { token: opts.token } : {}),
        ...(opts.rbac ? { rbac: true } : {}),
      };
      const [{ createLogger }, { startSandbox }] = await Promise.all([
        import('../../log/logger.ts'),
        import('../../sandbox/index.ts'),
      ]);
      const sandbox = await startSandbox({
        ...options,
        logger: createLogger({ name: 'sandbox', format: 'json', destination: process.stderr }),
      });
      const kubeconfig = resolve(opts.kubeconfig);
      await sandbox.writeKubeconfig(kubeconfig);
      process.stdout.write(`sandbox ready: kubeconfig ${kubeconfig} server ${sandbox.url}\n`);
      await new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void sandbox.stop().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
  // `sandbox kubelet --kubeconfig F` reads the kubeconfig, `sandbox --kubeconfig F` writes one: the
  // sandbox's own options stop at its subcommand's name (the program enables the same).
  sandboxCommand.enablePositionalOptions();
  sandboxCommand
    .command('kubelet')
    .description(
      "run the sandbox's kubelet against any API server: pod status (Ready, crash loops, pull failures) as each pod's sandbox.rollgate.dev/behavior annotation says",
    )
    .requiredOption(
      '--kubeconfig <file>',
      'kubeconfig of the API server (needs pods: list, watch; pods/status: patch)',
    )
    .option('--missing-image <pattern>', 'image glob the registry lacks (repeatable)', collect, [])
    .option('--ready-delay-ms <ms>', 'how long healthy pods take to become Ready', '1000')
    .action(async (opts: { kubeconfig: string; missingImage: string[]; readyDelayMs: string }) => {
      const readyDelayMs = parseNumber('ready-delay-ms', opts.readyDelayMs, { min: 0, integer: true });
      const [{ createLogger }, { kubeConfigFromFile, startKubeletClient }] = await Promise.all([
        import('../../log/logger.ts'),
        import('../../sandbox/kubelet-client.ts'),
      ]);
      const kubeConfig = kubeConfigFromFile(resolve(opts.kubeconfig));
      const kubelet = await startKubeletClient({
        kubeConfig,
        logger: createLogger({ name: 'kubelet', format: 'json', destination: process.stderr }),
        controller: { readyDelayMs, missingImages: opts.missingImage },
      });
      process.stdout.write(
        `kubelet stand-in running against ${kubeConfig.getCurrentCluster()?.server ?? '?'}\n`,
      );
      // The watch's restart timers do not hold the process (they are unref'd), and between two watch
      // connections nothing else would: this one keeps it running until a signal.
      const keepAlive = setInterval(() => undefined, 60_000);
      await new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          clearInterval(keepAlive);
          kubelet.stop();
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
