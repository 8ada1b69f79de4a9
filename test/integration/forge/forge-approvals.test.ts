// Each forge adapter's reading of approvals, against answers in the vendor's documented shape: who counts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForge } from '../../../src/forge/create-forge.ts';
import type { ForgeProvider } from '../../../src/forge/forge.ts';

/**
 * One row per provider: the API root and repository it is configured with, the request its approvals
 * read must be (method and path, as the vendor's reference names them), the answer (shapes from the
 * vendor's reference: GitLab "Merge request approvals", Gitea PullReview, Bitbucket Cloud
 * pullrequest.participants, Bitbucket Data Center RestPullRequest.reviewers/participants, Azure DevOps
 * IdentityRefWithVote) and who must count as approving.
 */
const rows: Array<{
  provider: ForgeProvider;
  apiPath: string;
  repository: string;
  wantPath: string;
  answer: unknown;
  want: string[];
}> = [
  {
    provider: 'gitlab',
    apiPath: '/api/v4',
    repository: 'acme/deploy',
    wantPath: '/api/v4/projects/acme%2Fdeploy/merge_requests/5/approvals',
    answer: {
      id: 1,
      iid: 5,
      approved: true,
      approvals_required: 1,
      approvals_left: 0,
      approved_by: [
        { user: { id: 7, username: 'ana', name: 'Ana' } },
        { user: { id: 8, username: 'bo', name: 'Bo' } },
      ],
    },
    want: ['ana', 'bo'],
  },
  {
    provider: 'gitea',
    apiPath: '/api/v1',
    repository: 'acme/deploy',
    wantPath: '/api/v1/repos/acme/deploy/pulls/5/reviews',
    answer: [
      { id: 1, state: 'APPROVED', user: { id: 7, login: 'ana' }, dismissed: false, stale: false },
      { id: 2, state: 'REQUEST_CHANGES', user: { id: 8, login: 'bo' }, dismissed: false },
      { id: 3, state: 'APPROVED', user: { id: 9, login: 'cy' }, dismissed: true },
      { id: 4, state: 'COMMENT', user: { id: 7, login: 'ana' }, dismissed: false },
    ],
    want: ['ana'],
  },
  {
    provider: 'bitbucket-cloud',
    apiPath: '/2.0',
    repository: 'acme/deploy',
    wantPath: '/2.0/repositories/acme/deploy/pullrequests/5',
    answer: {
      id: 5,
      title: 't',
      state: 'OPEN',
      source: { branch: { name: 'rollgate/promote/p/web' }, commit: { hash: 'abc' } },
      destination: { branch: { name: 'main' }, commit: { hash: 'def' } },
      participants: [
        {
          user: { account_id: '557058:ana', uuid: '{a}' },
          role: 'REVIEWER',
          approved: true,
          state: 'approved',
        },
        {
          user: { account_id: '557058:bo', uuid: '{b}' },
          role: 'REVIEWER',
          approved: false,
          state: 'changes_requested',
        },
        { user: { uuid: '{c}' }, role: 'PARTICIPANT', approved: true, state: 'approved' },
      ],
    },
    want: ['557058:ana', '{c}'],
  },
  {
    provider: 'bitbucket-datacenter',
    apiPath: '',
    repository: 'ACME/deploy',
    wantPath: '/rest/api/1.0/projects/ACME/repos/deploy/pull-requests/5',
    answer: {
      id: 5,
      version: 2,
      title: 't',
      state: 'OPEN',
      fromRef: { id: 'refs/heads/rollgate/promote/p/web', latestCommit: 'abc' },
      toRef: { id: 'refs/heads/main', latestCommit: 'def' },
      reviewers: [
        { user: { name: 'ana', slug: 'ana' }, role: 'REVIEWER', approved: true, status: 'APPROVED' },
        { user: { name: 'bo', slug: 'bo' }, role: 'REVIEWER', approved: false, status: 'NEEDS_WORK' },
      ],
      participants: [
        { user: { name: 'cy', slug: 'cy' }, role: 'PARTICIPANT', approved: true, status: 'APPROVED' },
      ],
    },
    want: ['ana', 'cy'],
  },
  {
    provider: 'azure-devops',
    apiPath: '/acme',
    repository: 'shop/deploy',
    wantPath: '/acme/shop/_apis/git/repositories/deploy/pullrequests/5/reviewers',
    answer: {
      count: 4,
      value: [
        { id: 'a1', uniqueName: 'ana@acme.example', vote: 10 },
        { id: 'b2', uniqueName: 'bo@acme.example', vote: 5 },
        { id: 'c3', uniqueName: 'cy@acme.example', vote: -10 },
        { id: 'g4', uniqueName: '[shop]\\Release Managers', vote: 10, isContainer: true },
      ],
    },
    want: ['ana@acme.example'],
  },
];

describe('forge adapters: approvals', () => {
  let server: Server;
  let base: string;
  const requests: Array<{ method: string; path: string }> = [];
  let answer: unknown;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      requests.push({ method: request.method ?? '', path: url.pathname });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(rows)('$provider: one GET, approvers as the forge counts them', async (row) => {
    requests.length = 0;
    answer = row.answer;
    const forge = createForge({
      provider: row.provider,
      apiUrl: `${base}${row.apiPath}`,
      repository: row.repository,
      token: 'forge-token-0123456789',
      maxRetries: 0,
      sleep: async () => undefined,
    });
    expect(await forge.approvals(5)).toEqual(row.want);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${row.wantPath}`]);
  });
});
