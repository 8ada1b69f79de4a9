// A notification template (`template.<name>`): every string in it is a Go template, rendered into one message.
import { parse as parseYaml } from 'yaml';
import { compileGoTemplate, type GoTemplate } from './go-template.ts';
import { NotificationConfigError } from './notification-config-error.ts';

/**
 * A rendered template: `message` for every service, plus the per-service blocks of notifications-engine
 * (`slack`, `teams`, `webhook.<service name>`) with each string rendered. Fields stay plain data, so a
 * rendered notification can travel in a queue job.
 */
export interface RenderedNotification {
  message?: string;
  slack?: Record<string, unknown>;
  teams?: Record<string, unknown>;
  webhook?: Record<string, Record<string, unknown>>;
  [field: string]: unknown;
}

/** A compiled template: render it with the template data (`{ rollout, … }`). */
export interface NotificationTemplate {
  name: string;
  key: string;
  render(data: Record<string, unknown>): RenderedNotification;
}

type Compiled = string | GoTemplate | Compiled[] | { [field: string]: Compiled } | number | boolean | null;

function compileTree(value: unknown, key: string): Compiled {
  if (typeof value === 'string') return compileGoTemplate(value, key);
  if (Array.isArray(value)) return value.map((v) => compileTree(v, key));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compileTree(v, key)]));
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  return null;
}

function renderTree(compiled: Compiled, data: Record<string, unknown>): unknown {
  if (compiled === null || typeof compiled !== 'object') return compiled;
  if (Array.isArray(compiled)) return compiled.map((c) => renderTree(c, data));
  if ('render' in compiled && typeof compiled.render === 'function') return compiled.render(data);
  return Object.fromEntries(
    Object.entries(compiled as Record<string, Compiled>).map(([k, v]) => [k, renderTree(v, data)]),
  );
}

/**
 * The `github` block's `repoURLPath` and `revisionPath` when a template leaves them out: a source's URL
 * and commit, or the commit a Rollout was last applied from (its `rollgate.dev/commit` annotation).
 * notifications-engine's defaults read an Argo CD Application, which Rollgate has none of.
 */
const GITHUB_DEFAULTS = {
  repoURLPath: '{{with .source}}{{.url}}{{end}}',
  revisionPath:
    '{{with .source}}{{.status.commit}}{{end}}{{with .rollout}}{{with .metadata.annotations}}{{index . "rollgate.dev/commit"}}{{end}}{{end}}',
};

function withGitHubDefaults(parsed: Record<string, unknown>): Record<string, unknown> {
  const github = parsed.github;
  if (typeof github !== 'object' || github === null || Array.isArray(github)) return parsed;
  return { ...parsed, github: { ...GITHUB_DEFAULTS, ...github } };
}

/**
 * Parses the YAML of `template.<name>` and compiles every string in it.
 * @throws NotificationConfigError naming the key: not YAML, not a map, or a template Rollgate cannot run.
 */
export function parseNotificationTemplate(name: string, yamlText: string): NotificationTemplate {
  const key = `template.${name}`;
  let parsed: unknown;
  try {
    parsed = parseYaml(yamlText);
  } catch (err) {
    throw new NotificationConfigError('notify.config.invalid', key, `not YAML: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new NotificationConfigError('notify.config.invalid', key, 'must be a YAML map (message, slack, …)');
  const compiled = compileTree(withGitHubDefaults(parsed as Record<string, unknown>), key);
  return {
    name,
    key,
    render: (data) => renderTree(compiled, data) as RenderedNotification,
  };
}
