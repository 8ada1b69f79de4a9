// Shapes shared by the webhook server and its providers: configuration, push notices, verdicts.
import type { IncomingHttpHeaders } from 'node:http';
import type { ReceivedBody } from './signature.ts';

/** The providers the webhook server answers for, one path each: `/webhooks/<name>`. */
export const WEBHOOK_PROVIDERS = [
  'github',
  'gitlab',
  'gitea',
  'bitbucket',
  'azure-devops',
  'generic',
] as const;
export type WebhookProviderName = (typeof WEBHOOK_PROVIDERS)[number];

/** Secrets already resolved (from the config's secret / secretFile / secretEnv) by the caller. */
export interface WebhookProviderConfig {
  secret?: string;
}

/** Bitbucket: Data Center/Server (and Cloud webhooks with a secret) sign; other Cloud hooks are known by UUID. */
export interface BitbucketWebhookConfig extends WebhookProviderConfig {
  /** The UUID of the Bitbucket Cloud webhook to accept (X-Hook-UUID), braces optional (config key). */
  hookUuid?: string;
}

/** Azure DevOps: service hooks send basic credentials; `secret` is the password, `username` checked when set. */
export interface AzureDevOpsWebhookConfig extends WebhookProviderConfig {
  username?: string;
}

/** A GitSource's own receiver: the source it polls (internal name) and the secret from its Secret. */
export interface SourceWebhook {
  source: string;
  secret: string;
}

/** The receiver of GitSource NAMESPACE/NAME, when it has a webhook secret and runs; read at each delivery. */
export type SourceWebhookLookup = (namespace: string, name: string) => SourceWebhook | undefined;

export interface WebhooksConfig {
  github?: WebhookProviderConfig;
  gitlab?: WebhookProviderConfig;
  gitea?: WebhookProviderConfig;
  bitbucket?: BitbucketWebhookConfig;
  'azure-devops'?: AzureDevOpsWebhookConfig;
  generic?: WebhookProviderConfig;
}

/** A push to (or a merged pull request into) a branch, as the server hands it to the process. */
export interface PushNotice {
  provider: WebhookProviderName;
  deliveryId: string | undefined;
  /** Every URL the payload names for the repository (clone, ssh, web); any may match a source. */
  repositoryUrls: string[];
  branch: string;
  cause: 'push' | 'merge';
  /**
   * The one source a GitSource's own receiver (`/webhooks/PROVIDER/NAMESPACE/NAME`) may poll, by its internal
   * name; absent for the configuration's receivers, which poll every source on the repository and branch.
   */
  only?: string;
}

/** What the process did with a push: the sources whose poll was enqueued (empty: branch not tracked). */
export interface PushHandled {
  sourcesQueued: string[];
}

/** Called for each verified push; should only enqueue (the HTTP answer waits for it). */
export type OnPush = (notice: PushNotice) => Promise<PushHandled> | PushHandled;

/** Outcome of authenticating a delivery; a refusal is answered 401 (an unconfigured provider never gets here). */
export type Verification = { ok: true } | { ok: false; reason: string };

/** What a verified payload means. */
export type Interpretation =
  | { kind: 'push'; repositoryUrls: string[]; branches: string[]; cause: 'push' | 'merge' }
  | { kind: 'ignored'; reason: string }
  /** The payload is JSON but not what this provider's event should carry (answered 400). */
  | { kind: 'invalid'; reason: string };

/** One provider's rules: how deliveries are authenticated, identified and read. */
export interface WebhookProvider {
  readonly name: WebhookProviderName;
  /** True when the configuration allows verifying anything at all. */
  isConfigured(config: WebhooksConfig): boolean;
  /**
   * True when every real delivery's body differs (it names commits, times): the same body under a new
   * delivery id is then a replay and polls nothing. False for the generic webhook, whose body
   * (`{repository, branch}`) is the same for every push.
   */
  readonly uniqueBodies: boolean;
  /**
   * The key the provider signs bodies with (an HMAC-SHA256), when it signs: the server streams each body
   * into that HMAC as it arrives. Undefined for a provider that authenticates otherwise (GitLab's token).
   */
  signingSecret(config: WebhooksConfig): string | undefined;
  /** `body`: as received (the streamed HMAC is reused), or plain bytes (forge contract tests). */
  verify(headers: IncomingHttpHeaders, body: ReceivedBody | Buffer, config: WebhooksConfig): Verification;
  deliveryId(headers: IncomingHttpHeaders): string | undefined;
  /** The event name from the headers, for logs. */
  eventName(headers: IncomingHttpHeaders): string | undefined;
  interpret(headers: IncomingHttpHeaders, body: unknown): Interpretation;
}
