// The configuration module's public face.
export { configSchema, type RedisSettings, type RollgateConfig, type SourceConfig } from './schema.ts';
export {
  parseRedisUrl,
  redactRedisUrl,
  RedisUrlError,
  type ParsedRedisUrl,
  type RedisHost,
} from './redis-url.ts';
export { loadConfig, configKeys, type LoadConfigOptions, type ConfigKey } from './config-loader.ts';
export { ConfigError, type ConfigProblem } from './config-error.ts';
export { resolveSecret, SecretUnavailableError, type SecretReference } from './secret-source.ts';
export { resolveSourceAuth, type ResolvedSourceAuth } from './source-auth.ts';
export { describeCycle, findDependencyCycle } from './source-dependencies.ts';
