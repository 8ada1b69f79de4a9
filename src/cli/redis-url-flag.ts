// A Redis URL given on the command line: refused when it carries a password, which every user of the machine could read.
import { ConfigError } from '../config/config-error.ts';
import { parseRedisUrl, RedisUrlError } from '../config/redis-url.ts';

/**
 * Throws ConfigError when `url`, given by `origin` (`--redis`, `--set`), holds a password. A process's
 * arguments are readable by every user of the machine (`ps`, `/proc/<pid>/cmdline`) and end up in shell
 * histories and CI logs; the environment and files are not. A URL that does not parse is left to the
 * configuration's own check, which names it.
 */
export function refusePasswordOnCommandLine(url: string, origin: string): void {
  let password: string | undefined;
  try {
    password = parseRedisUrl(url).password;
  } catch (err) {
    if (err instanceof RedisUrlError) return;
    throw err;
  }
  if (password === undefined) return;
  throw new ConfigError([
    {
      path: 'redis.url',
      origin,
      message:
        'holds a password, and a command line is readable by every user of the machine: give the URL in ' +
        'ROLLGATE_REDIS_URL, or the password in a file or variable (redis.passwordFile, redis.passwordEnv)',
    },
  ]);
}
