// Parses the notifications-engine ConfigMap and Secret (Argo's format) into services, templates and triggers.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ExpressionNode } from '../analysis/expression/ast.ts';
import { evaluateExpression } from '../analysis/expression/evaluate-expression.ts';
import { parseExpression } from '../analysis/expression/parse.ts';
import { NotificationConfigError } from './notification-config-error.ts';
import { parseNotificationTemplate, type NotificationTemplate } from './notification-template.ts';
import { SERVICE_OPTION_SCHEMAS, isServiceType, type ServiceConfig } from './service-options.ts';
import { FLEET_TRIGGER_CATALOG } from './fleet-stopped.ts';
import { SOURCE_TRIGGER_CATALOG } from './source-trigger-catalog.ts';

/** The ConfigMap and Secret Rollgate reads in `kubernetes.stateNamespace`. */
export const NOTIFICATION_CONFIGMAP = 'rollgate-notification-configmap';
export const NOTIFICATION_SECRET = 'rollgate-notification-secret';

/**
 * An expression of a trigger (`when`, `oncePer`), in the expr language of Argo's conditions, over
 * `rollout` (a Rollout's triggers), `source` (a source's) or `fleet` (a Fleet's; the others are then
 * null), and `cluster` (the name of the cluster it is about). Compiled by the analysis expression module:
 * the same language, the same limits.
 */
export interface TriggerExpression {
  source: string;
  evaluate(vars: { rollout?: unknown; source?: unknown; fleet?: unknown; cluster?: unknown }): unknown;
}

/** One entry of `trigger.<name>`: send these templates, when `when` holds (always when absent). */
export interface TriggerCondition {
  when?: TriggerExpression;
  send: string[];
  /** Sends once per value of this expression instead of once per transition. */
  oncePer?: TriggerExpression;
}

/** Everything the ConfigMap configures, ready to use. */
export interface NotificationConfig {
  services: ReadonlyMap<string, ServiceConfig>;
  templates: ReadonlyMap<string, NotificationTemplate>;
  triggers: ReadonlyMap<string, TriggerCondition[]>;
  /** Triggers a `subscribe.<service>` annotation (no trigger named) subscribes to. */
  defaultTriggers: string[];
  /** `defaultTriggers.<service>`: the default triggers of one service, instead of `defaultTriggers`. */
  defaultTriggersByService: ReadonlyMap<string, string[]>;
  /**
   * Keys that parsed but cannot be used, each with why: a service type Rollgate has no sender for (a
   * subscription to it fails naming the key). Argo ConfigMaps carry such keys; they do not stop the rest.
   */
  unusable: ReadonlyMap<string, NotificationConfigError>;
}

export const EMPTY_NOTIFICATION_CONFIG: NotificationConfig = {
  services: new Map(),
  templates: new Map(),
  triggers: new Map(),
  defaultTriggers: [],
  defaultTriggersByService: new Map(),
  unusable: new Map(),
};

/** Keys of the format that Rollgate reads nothing from (notifications-engine's own settings). */
const IGNORED_KEYS = new Set(['context', 'subscriptions']);

const triggerSchema = z.array(
  z.looseObject({
    when: z.string().min(1).optional(),
    send: z.array(z.string().min(1)).min(1),
    oncePer: z.string().min(1).optional(),
    description: z.string().optional(),
  }),
);

function yamlOf(key: string, text: string): unknown {
  try {
    return parseYaml(text);
  } catch (err) {
    throw new NotificationConfigError('notify.config.invalid', key, `not YAML: ${(err as Error).message}`);
  }
}

function compileExpression(key: string, field: string, source: string): TriggerExpression {
  let ast: ExpressionNode;
  try {
    ast = parseExpression(source, { variables: new Set(['rollout', 'source', 'fleet', 'cluster']) });
  } catch (err) {
    throw new NotificationConfigError('notify.config.invalid', key, `${field}: ${(err as Error).message}`);
  }
  return {
    source,
    evaluate: (vars) =>
      evaluateExpression(
        ast,
        {
          rollout: vars.rollout ?? null,
          source: vars.source ?? null,
          fleet: vars.fleet ?? null,
          cluster: vars.cluster ?? null,
        },
        source,
      ),
  };
}

/**
 * Replaces `$name` references in every string of a service's options by the Secret's `name` key, as
 * notifications-engine does (whole values like `$slack-token`, or inside one like `Bearer $token`).
 */
function resolveSecrets(
  value: unknown,
  key: string,
  secret: Readonly<Record<string, string>>,
  used: Set<string>,
): unknown {
  if (typeof value === 'string')
    return value.replace(/\$([A-Za-z0-9_.-]+)/g, (_, name: string) => {
      const found = secret[name];
      if (found === undefined)
        throw new NotificationConfigError(
          'notify.config.secret-missing',
          key,
          `references $${name}, which Secret ${NOTIFICATION_SECRET} does not have`,
        );
      used.add(found);
      return found;
    });
  if (Array.isArray(value)) return value.map((v) => resolveSecrets(v, key, secret, used));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, resolveSecrets(v, key, secret, used)]),
    );
  return value;
}

function parseService(
  key: string,
  text: string,
  secret: Readonly<Record<string, string>>,
): ServiceConfig | NotificationConfigError {
  const [, type = '', ...rest] = key.split('.');
  const name = rest.length > 0 ? rest.join('.') : type;
  if (!isServiceType(type))
    return new NotificationConfigError(
      'notify.config.invalid',
      key,
      `service type "${type}" is not supported (supported: ${Object.keys(SERVICE_OPTION_SCHEMAS).join(', ')})`,
    );
  const used = new Set<string>();
  const raw = resolveSecrets(yamlOf(key, text) ?? {}, key, secret, used);
  const parsed = SERVICE_OPTION_SCHEMAS[type].safeParse(raw);
  if (!parsed.success)
    throw new NotificationConfigError('notify.config.invalid', key, z.prettifyError(parsed.error));
  // Short values (an empty key, "1") would scrub ordinary words from errors and guard nothing.
  const secretValues = [...used].filter((v) => v.length >= 4);
  return { name, key, type, options: parsed.data, secretValues } as ServiceConfig;
}

/**
 * Parses the ConfigMap's `data` and the Secret's decoded `data`. Keys: `service.<type>[.<name>]`
 * (YAML options; `$key` values come from the Secret), `template.<name>` (YAML, Go templates),
 * `trigger.<name>` (a YAML list of `{when, send, oncePer}`), `defaultTriggers` (a YAML list). The
 * source triggers and their templates of {@link SOURCE_TRIGGER_CATALOG}, and the fleet's of
 * {@link FLEET_TRIGGER_CATALOG}, are there unless `data` has the key.
 * @throws NotificationConfigError naming the first key that cannot be used.
 */
export function parseNotificationConfig(
  data: Readonly<Record<string, string>>,
  secret: Readonly<Record<string, string>> = {},
): NotificationConfig {
  const services = new Map<string, ServiceConfig>();
  const templates = new Map<string, NotificationTemplate>();
  const triggers = new Map<string, TriggerCondition[]>();
  const unusable = new Map<string, NotificationConfigError>();
  let defaultTriggers: string[] = [];
  const defaultTriggersByService = new Map<string, string[]>();
  const entries: Record<string, string> = { ...SOURCE_TRIGGER_CATALOG, ...FLEET_TRIGGER_CATALOG, ...data };
  for (const key of Object.keys(entries).sort()) {
    const text = entries[key]!;
    if (key.startsWith('service.')) {
      const service = parseService(key, text, secret);
      if (service instanceof NotificationConfigError) unusable.set(key, service);
      else services.set(service.name, service);
    } else if (key.startsWith('template.')) {
      const template = parseNotificationTemplate(key.slice('template.'.length), text);
      templates.set(template.name, template);
    } else if (key.startsWith('trigger.')) {
      const parsed = triggerSchema.safeParse(yamlOf(key, text));
      if (!parsed.success)
        throw new NotificationConfigError(
          'notify.config.invalid',
          key,
          `must be a list of {when, send: [templates], oncePer}: ${z.prettifyError(parsed.error)}`,
        );
      triggers.set(
        key.slice('trigger.'.length),
        parsed.data.map((c) => ({
          send: c.send,
          ...(c.when !== undefined && { when: compileExpression(key, 'when', c.when) }),
          ...(c.oncePer !== undefined && { oncePer: compileExpression(key, 'oncePer', c.oncePer) }),
        })),
      );
    } else if (key === 'defaultTriggers' || key.startsWith('defaultTriggers.')) {
      const parsed = z.array(z.string().min(1)).safeParse(yamlOf(key, text));
      if (!parsed.success)
        throw new NotificationConfigError(
          'notify.config.invalid',
          key,
          'must be a YAML list of trigger names',
        );
      if (key === 'defaultTriggers') defaultTriggers = parsed.data;
      else defaultTriggersByService.set(key.slice('defaultTriggers.'.length), parsed.data);
    } else if (!IGNORED_KEYS.has(key)) {
      throw new NotificationConfigError(
        'notify.config.invalid',
        key,
        'unknown key (expected service.<type>[.<name>], template.<name>, trigger.<name> or defaultTriggers)',
      );
    }
  }
  for (const [name, conditions] of triggers)
    for (const template of conditions.flatMap((c) => c.send))
      if (!templates.has(template))
        throw new NotificationConfigError(
          'notify.config.invalid',
          `trigger.${name}`,
          `sends template "${template}", which has no template.${template} key`,
        );
  for (const [key, names] of [
    ['defaultTriggers', defaultTriggers] as const,
    ...[...defaultTriggersByService].map(
      ([service, names]) => [`defaultTriggers.${service}`, names] as const,
    ),
  ])
    for (const name of names)
      if (!triggers.has(name))
        throw new NotificationConfigError('notify.config.invalid', key, `no trigger.${name} key`);
  return { services, templates, triggers, defaultTriggers, defaultTriggersByService, unusable };
}
