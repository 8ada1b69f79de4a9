// GitHub webhooks from the double: payloads checked against @octokit/webhooks-schemas, then signed and POSTed as GitHub does.
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { commitDetails, pushedCommits, type CommitDetails } from './bare-repository.ts';
import type { DoublePull, DoubleRepository, DoubleUser } from './forge-state.ts';
import {
  pullObject,
  repositoryObject,
  userObject,
  type GitHubUrls,
  type PullShas,
} from './github-objects.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;
const ZERO_SHA = '0'.repeat(40);

/** The webhook schemas, compiled per event the first time one is sent (all at once takes seconds). */
class WebhookSchemas {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    const require = createRequire(import.meta.url);
    const schema = require('@octokit/webhooks-schemas') as { definitions: Record<string, unknown> };
    this.ajv = new Ajv({ strict: false, allErrors: true, logger: false });
    addFormats(this.ajv);
    // Only the definitions: the root's oneOf over every event would be compiled along with any one of them.
    this.ajv.addSchema({ $id: 'github-webhooks', definitions: schema.definitions });
  }

  /** Problems of `payload` as definition `name` (e.g. `push$event`, `pull_request$closed`). */
  check(name: string, payload: unknown): string[] {
    let validate = this.compiled.get(name);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `github-webhooks#/definitions/${encodeURIComponent(name)}` });
      this.compiled.set(name, validate);
    }
    if (validate(payload)) return [];
    return (validate.errors ?? [])
      .slice(0, 10)
      .map(
        (error) =>
          `${name}${error.instancePath}: ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
      );
  }
}

let schemas: WebhookSchemas | undefined;

/** One POST the double made (or tried to). */
export interface WebhookDelivery {
  id: string;
  url: string;
  event: string;
  action?: string;
  payload: Json;
  /** HTTP status of the receiver's answer; undefined when the connection failed. */
  status?: number;
  error?: string;
}

function commitObject(urls: GitHubUrls, repo: DoubleRepository, commit: CommitDetails): Json {
  return {
    id: commit.id,
    tree_id: commit.treeId,
    distinct: true,
    message: commit.message,
    timestamp: commit.timestamp,
    url: `${urls.web}/${repo.fullName}/commit/${commit.id}`,
    author: { name: commit.author.name, email: commit.author.email },
    committer: { name: commit.committer.name, email: commit.committer.email },
    added: commit.added,
    removed: commit.removed,
    modified: commit.modified,
  };
}

/** Receivers registered with {@link GitHubWebhooks.register}, and every delivery made to them. */
export class GitHubWebhooks {
  private readonly hooks: Array<{ id: number; url: string; secret: string }> = [];
  private readonly inFlight = new Set<Promise<void>>();
  readonly deliveries: WebhookDelivery[] = [];
  /** Payloads that failed the schema and were therefore not sent. */
  readonly invalid: string[] = [];

  constructor(private readonly urls: GitHubUrls) {}

  register(url: string, secret: string): void {
    this.hooks.push({ id: this.hooks.length + 1, url, secret });
  }

  get registered(): boolean {
    return this.hooks.length > 0;
  }

  /** Waits until every delivery started so far has been answered. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** A `push` event for one ref update; `before`/`after` undefined mean the ref was created/deleted. */
  async push(
    repo: DoubleRepository,
    update: {
      ref: string;
      before?: string;
      after?: string;
      /** The old head is not in the new history. */
      forced: boolean;
      pusher: DoubleUser;
      /** Heads of the other branches: a new branch lists only commits none of them has. */
      otherHeads: string[];
    },
  ): Promise<void> {
    if (!this.registered) return;
    const { before, after } = update;
    const commits =
      after === undefined
        ? []
        : await Promise.all(
            (await pushedCommits(repo.path, before, after, before ? [] : update.otherHeads)).map((sha) =>
              commitDetails(repo.path, sha),
            ),
          );
    const head =
      after === undefined ? undefined : (commits.at(-1) ?? (await commitDetails(repo.path, after)));
    const payload: Json = {
      ref: update.ref,
      before: before ?? ZERO_SHA,
      after: after ?? ZERO_SHA,
      created: before === undefined,
      deleted: after === undefined,
      forced: update.forced,
      base_ref: null,
      compare: `${this.urls.web}/${repo.fullName}/compare/${(before ?? ZERO_SHA).slice(0, 12)}...${(after ?? ZERO_SHA).slice(0, 12)}`,
      commits: commits.map((commit) => commitObject(this.urls, repo, commit)),
      head_commit: head ? commitObject(this.urls, repo, head) : null,
      repository: repositoryObject(this.urls, repo, 0),
      pusher: {
        name: update.pusher.login,
        email: `${update.pusher.id}+${update.pusher.login}@users.noreply.github.com`,
      },
      sender: userObject(this.urls, update.pusher),
    };
    this.send(repo, 'push', 'push$event', payload);
  }

  /** A `pull_request` `closed` event (merged or not). */
  pullRequestClosed(
    repo: DoubleRepository,
    pull: DoublePull,
    shas: PullShas,
    sender: DoubleUser,
    objectOptions: Omit<Parameters<typeof pullObject>[4], 'full' | 'variant'>,
  ): void {
    if (!this.registered) return;
    const payload: Json = {
      action: 'closed',
      number: pull.number,
      pull_request: pullObject(this.urls, repo, pull, shas, {
        ...objectOptions,
        full: true,
        variant: 'webhook',
      }),
      repository: repositoryObject(this.urls, repo, objectOptions.openIssues),
      sender: userObject(this.urls, sender),
    };
    this.send(repo, 'pull_request', 'pull_request$closed', payload);
  }

  private send(repo: DoubleRepository, event: string, definition: string, payload: Json): void {
    schemas ??= new WebhookSchemas();
    const problems = schemas.check(definition, payload);
    if (problems.length > 0) {
      this.invalid.push(...problems);
      return;
    }
    const body = Buffer.from(JSON.stringify(payload));
    for (const hook of this.hooks) {
      const delivery: WebhookDelivery = {
        id: randomUUID(),
        url: hook.url,
        event,
        payload,
        ...(typeof payload.action === 'string' ? { action: payload.action } : {}),
      };
      this.deliveries.push(delivery);
      const sending = fetch(hook.url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitHub-Hookshot/rollgate-double',
          'x-github-event': event,
          'x-github-delivery': delivery.id,
          'x-github-hook-id': String(hook.id),
          'x-github-hook-installation-target-type': 'repository',
          'x-github-hook-installation-target-id': String(repo.id),
          'x-hub-signature': `sha1=${createHmac('sha1', hook.secret).update(body).digest('hex')}`,
          'x-hub-signature-256': `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`,
        },
      })
        .then(async (response) => {
          delivery.status = response.status;
          await response.arrayBuffer();
        })
        .catch((error: unknown) => {
          delivery.error = error instanceof Error ? error.message : String(error);
        })
        .finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }
}
