// A signed GitHub push webhook, as a forge sends one after a push, for the benches that time "push → …".
import { createHmac, randomUUID } from 'node:crypto';
import type { RunningProcess } from '../src/process/start-process.ts';

/** Posts a push of `head` on main to Rollgate's GitHub webhook, signed with `secret`; throws unless accepted. */
export async function pushWebhook(
  process: RunningProcess,
  secret: string,
  repoUrl: string,
  head: string,
): Promise<void> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: head,
    repository: { clone_url: repoUrl, html_url: repoUrl, full_name: 'bench/apps' },
  });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const res = await fetch(`${process.http.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signature,
    },
    body,
  });
  if (!res.ok) throw new Error(`webhook answered ${res.status}`);
}
