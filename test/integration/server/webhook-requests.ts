// Test support: the webhook requests each Git host sends, built from their documented payload shapes.
import { createHmac, randomUUID } from 'node:crypto';

export interface WebhookRequest {
  headers: Record<string, string>;
  body: string;
}

const hmac = (secret: string, body: string): string =>
  createHmac('sha256', secret).update(body).digest('hex');

export interface PushSpec {
  branch: string;
  secret: string;
  deliveryId?: string;
  /** Replace the body after signing (to test signature mismatch) or before (raw override). */
  body?: string;
  /** The pushed commit, where the payload names one (GitHub); each real push names its own. */
  after?: string;
}

/** The body a spec asks for, else `payload` as JSON. */
const bodyOf = (spec: PushSpec, payload: unknown): string => spec.body ?? JSON.stringify(payload);

/** The delivery id a spec names, else a fresh one (hosts send a new id per delivery). */
const deliveryOf = (spec: PushSpec): string => spec.deliveryId ?? randomUUID();

/** A JSON request with the host's own headers after the content type. */
const jsonRequest = (
  body: string,
  headers: Record<string, string>,
  contentType = 'application/json',
): WebhookRequest => ({ body, headers: { 'content-type': contentType, ...headers } });

/** GitHub signs the body with HMAC-SHA256 in x-hub-signature-256. */
const githubRequest = (event: string, body: string, spec: PushSpec): WebhookRequest =>
  jsonRequest(body, {
    'x-github-event': event,
    'x-github-delivery': deliveryOf(spec),
    'x-hub-signature-256': `sha256=${hmac(spec.secret, body)}`,
  });

/** GitLab sends the secret itself as x-gitlab-token. */
const gitlabRequest = (event: string, body: string, spec: PushSpec): WebhookRequest =>
  jsonRequest(body, {
    'x-gitlab-event': event,
    'x-gitlab-event-uuid': deliveryOf(spec),
    'x-gitlab-token': spec.secret,
  });

export function githubPush(
  repo: { clone: string; html: string; ssh: string },
  spec: PushSpec,
): WebhookRequest {
  const body = bodyOf(spec, {
    ref: `refs/heads/${spec.branch}`,
    before: '0'.repeat(40),
    after: spec.after ?? 'a'.repeat(40),
    repository: { full_name: 'acme/apps', clone_url: repo.clone, html_url: repo.html, ssh_url: repo.ssh },
    pusher: { name: 'dev' },
  });
  return githubRequest('push', body, spec);
}

export function githubMergedPr(
  repo: { clone: string },
  spec: PushSpec & { merged: boolean },
): WebhookRequest {
  const body = JSON.stringify({
    action: 'closed',
    number: 7,
    pull_request: {
      merged: spec.merged,
      head: { ref: 'feature', repo: { clone_url: repo.clone } },
      base: { ref: spec.branch, repo: { clone_url: repo.clone } },
    },
    repository: { clone_url: repo.clone },
  });
  return githubRequest('pull_request', body, spec);
}

export function gitlabPush(
  project: { http: string; ssh: string; web: string },
  spec: PushSpec,
): WebhookRequest {
  const body = bodyOf(spec, {
    object_kind: 'push',
    event_name: 'push',
    ref: `refs/heads/${spec.branch}`,
    project: { git_http_url: project.http, git_ssh_url: project.ssh, web_url: project.web },
    repository: { git_http_url: project.http, git_ssh_url: project.ssh, homepage: project.web },
  });
  return gitlabRequest('Push Hook', body, spec);
}

export function gitlabMerge(project: { http: string }, spec: PushSpec & { action: string }): WebhookRequest {
  const body = JSON.stringify({
    object_kind: 'merge_request',
    project: { git_http_url: project.http },
    object_attributes: {
      action: spec.action,
      source_branch: 'feature',
      target_branch: spec.branch,
      target: { git_http_url: project.http },
    },
  });
  return gitlabRequest('Merge Request Hook', body, spec);
}

export function giteaPush(
  repo: { clone: string; html: string },
  spec: PushSpec & { forgejo?: boolean },
): WebhookRequest {
  const body = bodyOf(spec, {
    ref: `refs/heads/${spec.branch}`,
    before: '0'.repeat(40),
    after: 'b'.repeat(40),
    repository: { full_name: 'acme/platform', clone_url: repo.clone, html_url: repo.html },
  });
  const vendor = spec.forgejo === true ? 'forgejo' : 'gitea';
  return jsonRequest(body, {
    [`x-${vendor}-event`]: 'push',
    [`x-${vendor}-delivery`]: deliveryOf(spec),
    [`x-${vendor}-signature`]: hmac(spec.secret, body),
  });
}

export function bitbucketServerPush(clone: { http: string; ssh: string }, spec: PushSpec): WebhookRequest {
  const body = bodyOf(spec, {
    eventKey: 'repo:refs_changed',
    repository: {
      slug: 'deploy',
      project: { key: 'OPS' },
      links: {
        clone: [
          { href: clone.ssh, name: 'ssh' },
          { href: clone.http, name: 'http' },
        ],
      },
    },
    changes: [
      {
        ref: { id: `refs/heads/${spec.branch}`, displayId: spec.branch, type: 'BRANCH' },
        refId: `refs/heads/${spec.branch}`,
        fromHash: '1'.repeat(40),
        toHash: '2'.repeat(40),
        type: 'UPDATE',
      },
    ],
  });
  return jsonRequest(
    body,
    {
      'x-event-key': 'repo:refs_changed',
      'x-request-id': deliveryOf(spec),
      'x-hub-signature': `sha256=${hmac(spec.secret, body)}`,
    },
    'application/json; charset=utf-8',
  );
}

/** Bitbucket Cloud without a secret: authenticated by the hook's UUID (passed as `secret`). */
export function bitbucketCloudPush(repo: { fullName: string }, spec: PushSpec): WebhookRequest {
  const body = bodyOf(spec, {
    repository: {
      full_name: repo.fullName,
      links: { html: { href: `https://bitbucket.org/${repo.fullName}` } },
    },
    push: {
      changes: [{ new: { type: 'branch', name: spec.branch }, old: { type: 'branch', name: spec.branch } }],
    },
  });
  return jsonRequest(body, {
    'x-event-key': 'repo:push',
    'x-request-uuid': deliveryOf(spec),
    'x-hook-uuid': spec.secret,
  });
}

export function genericPush(repository: string, spec: PushSpec): WebhookRequest {
  const body = bodyOf(spec, { repository, branch: spec.branch });
  return jsonRequest(body, {
    'x-rollgate-delivery': deliveryOf(spec),
    'x-rollgate-signature': `sha256=${hmac(spec.secret, body)}`,
  });
}

/**
 * An Azure DevOps service hook notification (`git.push`, or `git.pullrequest.merged` with `merged`), sent with the
 * basic credentials set on the subscription: `spec.secret` is the password, `user` the user name.
 */
export function azureDevOpsEvent(
  repo: { remoteUrl: string; webUrl: string },
  spec: PushSpec & { user?: string; merged?: { status: string } },
): WebhookRequest {
  const notification = spec.deliveryId ?? randomUUID();
  const repository = {
    id: randomUUID(),
    name: 'deploy',
    url: repo.webUrl,
    remoteUrl: repo.remoteUrl,
    webUrl: repo.webUrl,
  };
  const resource = spec.merged
    ? {
        repository,
        pullRequestId: 7,
        status: spec.merged.status,
        mergeStatus: 'succeeded',
        sourceRefName: 'refs/heads/feature',
        targetRefName: `refs/heads/${spec.branch}`,
      }
    : {
        repository,
        pushId: 14,
        refUpdates: [
          {
            name: `refs/heads/${spec.branch}`,
            oldObjectId: '0'.repeat(39) + '1',
            newObjectId: spec.after ?? 'a'.repeat(40),
          },
        ],
      };
  const body = bodyOf(spec, {
    subscriptionId: randomUUID(),
    notificationId: 3,
    id: notification,
    eventType: spec.merged ? 'git.pullrequest.merged' : 'git.push',
    publisherId: 'tfs',
    resource,
    resourceVersion: '1.0',
    createdDate: new Date().toISOString(),
  });
  const credentials = Buffer.from(`${spec.user ?? 'rollgate'}:${spec.secret}`).toString('base64');
  return jsonRequest(body, { authorization: `Basic ${credentials}` }, 'application/json; charset=utf-8');
}
