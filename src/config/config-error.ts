// The error a refused configuration raises: every problem with its key path, origin and reason.

export interface ConfigProblem {
  /** Dotted key path, e.g. `workers.concurrency` or `sources[0].url`. */
  path: string;
  message: string;
  /** Where the bad value came from: `config/rollgate.yaml:12:5`, `env ROLLGATE_SERVER_PORT`, `--set …`. */
  origin?: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'config.invalid';

  constructor(readonly problems: ConfigProblem[]) {
    super(
      `invalid configuration:\n${problems
        .map((p) => `  ${p.origin ? `${p.origin}: ` : ''}${p.path || '(root)'}: ${p.message}`)
        .join('\n')}`,
    );
  }
}
