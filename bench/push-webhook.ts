// A signed GitHub push webhook, as a forge sends one after a push, for the benches that time "push → …".
import type { RunningProcess } from '../src/process/start-process.ts';
import { postGithubPush } from '../test/support/github-push.ts';

/** Posts a push of `head` on main to Rollgate's GitHub webhook, signed with `secret`; throws unless accepted. */
export async function pushWebhook(
  /** In-process Rollgate, or a child process's address (`{ http: { url } }`). */
  process: Pick<RunningProcess, 'http'> | { http: { url: string } },
  secret: string,
  repoUrl: string,
  head: string,
): Promise<void> {
  const res = await postGithubPush({
    baseUrl: process.http.url,
    secret,
    repoUrl,
    head,
    fullName: 'bench/apps',
  });
  if (!res.ok) throw new Error(`webhook answered ${res.status}`);
}
