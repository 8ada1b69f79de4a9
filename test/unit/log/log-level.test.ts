// --log-level, log.level and ROLLGATE_LOG_LEVEL take a word in any case, the usual other spellings and pino's numbers.
import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../../src/cli/commands/run.ts';
import { ConfigError } from '../../../src/config/config-error.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { normaliseLogLevel } from '../../../src/log/log-level.ts';

describe('log level', () => {
  it.each([
    ['debug', 'debug'],
    ['INFO', 'info'],
    ['Warning', 'warn'],
    ['warn', 'warn'],
    ['error', 'error'],
    ['50', 'error'],
    [' trace ', 'trace'],
    ['off', 'silent'],
  ])('%j is %s', (given, want) => {
    expect(normaliseLogLevel(given)).toBe(want);
    expect(loadConfig({ env: { ROLLGATE_LOG_LEVEL: given } }).log.level).toBe(want);
  });

  it('takes --log-level on the process commands, over the environment', async () => {
    const config = await configFromFlags({ logLevel: 'DEBUG' });
    expect(config.log.level).toBe('debug');
  });

  it('refuses a word it does not know, naming the levels', () => {
    expect(() => loadConfig({ env: {}, overrides: { 'log.level': 'loud' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, overrides: { 'log.level': 'loud' } })).toThrow(
      'command line: log.level: must be one of trace, debug, info, warn, error, fatal, silent, got "loud"',
    );
  });
});
