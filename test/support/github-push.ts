// A signed GitHub push webhook of one head on main, as a forge sends it after a push: for the pipeline tests and the benches that time "push → …".
import { createHmac, randomUUID } from 'node:crypto';

/** Posts a push of `head` on main to `${baseUrl}/webhooks/github`, signed with `secret`; the answer as it came. */
export function postGithubPush(options: {
  baseUrl: string;
  secret: string;
  repoUrl: string;
  head: string;
  fullName: string;
}): Promise<Response> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: options.head,
    repository: { clone_url: options.repoUrl, html_url: options.repoUrl, full_name: options.fullName },
  });
  const signature = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
  return fetch(`${options.baseUrl}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signature,
    },
    body,
  });
}
