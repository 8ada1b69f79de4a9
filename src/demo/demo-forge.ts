// The demo's stand-in for Gitea/Forgejo: the REST API v1 subset Rollgate's Gitea client calls, on the demo's real
// bare repository. Pull requests, comments and statuses live in memory; branches are read and merged with git.
//
// Not a forge: one repository, one user, one token, merge commits only, no labels, no reviewers, no webhooks
// (the demo sends the push webhook itself). It exists so `rollgate demo` can play a promotion without a network.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isBranchName } from '../git/branch-name.ts';
import { localBranchSha } from '../git/local-ref.ts';
import { DemoForgeError } from './demo-forge-error.ts';
import { DemoGitError } from './demo-git-error.ts';
import { git } from './demo-git.ts';

/** A pull request as the demo forge keeps it. */
export interface DemoForgePull {
  number: number;
  url: string;
  title: string;
  /** Every title it had, first to last (an edit by a superseding revision adds one). */
  titles: string[];
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  merged: boolean;
  /** The head commit: live while open, frozen when merged or closed. */
  headSha: string;
  mergeCommitSha?: string;
  /** The base commit the merge was made on (what the diff of a merged pull request is taken against). */
  mergedBaseSha?: string;
  /** Issue comments, oldest first. */
  comments: string[];
}

export interface DemoForgeOptions {
  /** The bare repository the pull requests' branches live in. */
  bareDir: string;
  /** `owner/name` the API serves it as. */
  repository: string;
  /** The one accepted token (default: 20 random bytes, hex). */
  token?: string;
  /** The token's user (default `rollgate-demo`). */
  login?: string;
  host?: string;
  port?: number;
}

/** The running demo forge. */
export interface DemoForge {
  /** The instance root, e.g. `http://127.0.0.1:41235`. */
  url: string;
  /** The API root Rollgate is configured with (`…/api/v1`). */
  apiUrl: string;
  repository: string;
  token: string;
  /** Snapshots of every pull request, by number. */
  pulls(): DemoForgePull[];
  /** The unified diff a pull request proposes (base…head, as the forge's "Files changed" shows it). */
  diff(number: number): Promise<string>;
  stop(): Promise<void>;
}

/** Gitea's default and largest page size. */
const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 50;
const MAX_BODY_BYTES = 1024 * 1024;
const STATUS_STATES = ['pending', 'success', 'error', 'failure', 'warning'] as const;
type StatusState = (typeof STATUS_STATES)[number];
// Gitea reports a commit's worst latest state.
const WORST_FIRST: StatusState[] = ['error', 'failure', 'warning', 'pending', 'success'];
const FULL_SHA = /^[0-9a-f]{40}$/;

interface Status {
  id: number;
  sha: string;
  state: StatusState;
  context: string;
  description: string;
  targetUrl: string;
  createdAt: string;
}

interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function fail(code: DemoForgeError['code'], message: string): never {
  throw new DemoForgeError(code, message);
}

function objectBody(request: Request): Record<string, unknown> {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    fail('rollgate.demo.forge.invalid_request', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, key: string, required: boolean): string | undefined {
  const value = body[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value === ''))
    fail('rollgate.demo.forge.invalid_request', `${key} must be a${required ? ' non-empty' : ''} string`);
  return value;
}

function branchField(body: Record<string, unknown>, key: string): string {
  const value = stringField(body, key, true) ?? '';
  if (!isBranchName(value)) fail('rollgate.demo.forge.invalid_request', `${key}: not a branch name`);
  return value;
}

/** The `page` and `limit` query parameters as Gitea reads them. */
function pageOf<T>(query: URLSearchParams, items: T[]): T[] {
  const limit = Math.min(
    Math.max(Number(query.get('limit') ?? DEFAULT_LIMIT) || DEFAULT_LIMIT, 1),
    MAX_LIMIT,
  );
  const page = Math.max(Number(query.get('page') ?? 1) || 1, 1);
  return items.slice((page - 1) * limit, page * limit);
}

async function readBody(message: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of message) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) fail('rollgate.demo.forge.too_large', 'request body over 1 MiB');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    fail('rollgate.demo.forge.invalid_request', 'the body is not JSON');
  }
}

/** The forge's state and its answers; the HTTP shell around it is {@link startDemoForge}. */
class DemoForgeApi {
  private readonly pulls = new Map<number, DemoForgePull>();
  private readonly statuses: Status[] = [];
  private nextId = 1;
  private readonly owner: string;
  private readonly name: string;
  private readonly user: { id: number; login: string };

  constructor(
    private readonly bareDir: string,
    readonly repository: string,
    login: string,
    private readonly webUrl: () => string,
  ) {
    const [owner = '', name = ''] = repository.split('/');
    this.owner = owner;
    this.name = name;
    this.user = { id: this.nextId++, login };
  }

  snapshot(): DemoForgePull[] {
    return [...this.pulls.values()].map((p) => ({ ...p, titles: [...p.titles], comments: [...p.comments] }));
  }

  async diff(number: number): Promise<string> {
    const pull = this.pull(number);
    const from = pull.mergedBaseSha ?? `refs/heads/${pull.base}`;
    const to = pull.state === 'open' ? `refs/heads/${pull.head}` : pull.headSha;
    return git(this.bareDir, ['diff', '--no-color', `${from}...${to}`]);
  }

  /** The commit a branch points at, or undefined when there is no such branch (read in this process). */
  private branchSha(branch: string): Promise<string | undefined> {
    return localBranchSha(this.bareDir, branch);
  }

  private pull(number: number): DemoForgePull {
    const pull = this.pulls.get(number);
    if (!pull) fail('rollgate.demo.forge.not_found', "The target couldn't be found.");
    return pull;
  }

  private async pullObject(pull: DemoForgePull): Promise<unknown> {
    if (pull.state === 'open') pull.headSha = (await this.branchSha(pull.head)) ?? pull.headSha;
    const baseSha = (await this.branchSha(pull.base)) ?? '';
    const repoId = 1;
    return {
      id: pull.number,
      number: pull.number,
      url: pull.url,
      html_url: pull.url,
      diff_url: `${pull.url}.diff`,
      user: this.user,
      title: pull.title,
      body: pull.body,
      labels: [],
      state: pull.state,
      draft: false,
      mergeable: pull.state === 'open',
      merged: pull.merged,
      merge_commit_sha: pull.mergeCommitSha ?? null,
      head: { label: pull.head, ref: pull.head, sha: pull.headSha, repo_id: repoId },
      base: { label: pull.base, ref: pull.base, sha: baseSha, repo_id: repoId },
      comments: pull.comments.length,
    };
  }

  private statusObject(status: Status): unknown {
    return {
      id: status.id,
      status: status.state,
      context: status.context,
      description: status.description,
      target_url: status.targetUrl,
      created_at: status.createdAt,
      updated_at: status.createdAt,
      creator: this.user,
    };
  }

  /** Answers one authenticated request under /api/v1. */
  async serve(request: Request): Promise<Answer> {
    const { method, path } = request;
    const user = /^\/users\/([^/]+)$/.exec(path);
    if (user && method === 'GET') {
      if (decodeURIComponent(user[1] ?? '').toLowerCase() !== this.user.login.toLowerCase())
        fail('rollgate.demo.forge.not_found', 'user redirect does not exist');
      return { status: 200, body: this.user };
    }
    // The repository's owner is a user, not an organization: Gitea answers 404 for its org labels.
    if (/^\/orgs\/[^/]+\/labels$/.test(path) && method === 'GET')
      fail('rollgate.demo.forge.not_found', 'GetOrgByName');
    const repo = /^\/repos\/([^/]+)\/([^/]+)(\/.*)$/.exec(path);
    if (!repo) fail('rollgate.demo.forge.not_found', 'Not Found');
    const [owner, name] = [decodeURIComponent(repo[1] ?? ''), decodeURIComponent(repo[2] ?? '')];
    if (`${owner}/${name}`.toLowerCase() !== `${this.owner}/${this.name}`.toLowerCase())
      fail('rollgate.demo.forge.not_found', "The target couldn't be found.");
    return this.serveRepository(method, repo[3] ?? '', request);
  }

  private async serveRepository(method: string, rest: string, request: Request): Promise<Answer> {
    if (rest === '/labels' && method === 'GET') return { status: 200, body: [] };
    if (rest === '/pulls' && method === 'GET') {
      const state = request.query.get('state') ?? 'open';
      const all = [...this.pulls.values()]
        .filter((p) => state === 'all' || p.state === state)
        .sort((a, b) => b.number - a.number);
      const page = pageOf(request.query, all);
      return {
        status: 200,
        headers: { 'x-total-count': String(all.length) },
        body: await Promise.all(page.map((p) => this.pullObject(p))),
      };
    }
    if (rest === '/pulls' && method === 'POST') return this.createPull(objectBody(request));
    const pullPath = /^\/pulls\/(\d+)(\/merge)?$/.exec(rest);
    if (pullPath) {
      const pull = this.pull(Number(pullPath[1]));
      if (pullPath[2] === undefined && method === 'GET')
        return { status: 200, body: await this.pullObject(pull) };
      if (pullPath[2] === undefined && method === 'PATCH') return this.editPull(pull, objectBody(request));
      if (pullPath[2] !== undefined && method === 'POST') return this.merge(pull, objectBody(request));
    }
    const comments = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (comments && method === 'POST') {
      const pull = this.pull(Number(comments[1]));
      const body = stringField(objectBody(request), 'body', true) ?? '';
      pull.comments.push(body);
      return { status: 201, body: { id: this.nextId++, body, user: this.user } };
    }
    const statusPost = /^\/statuses\/([^/]+)$/.exec(rest);
    if (statusPost && method === 'POST') return this.createStatus(statusPost[1] ?? '', objectBody(request));
    const statusGet = /^\/commits\/([^/]+)\/status$/.exec(rest);
    if (statusGet && method === 'GET')
      return this.combinedStatus(decodeURIComponent(statusGet[1] ?? ''), request);
    fail('rollgate.demo.forge.not_found', 'Not Found');
  }

  private async createPull(body: Record<string, unknown>): Promise<Answer> {
    const head = branchField(body, 'head');
    const base = branchField(body, 'base');
    const title = stringField(body, 'title', true) ?? '';
    const text = stringField(body, 'body', false) ?? '';
    const labels = body.labels;
    if (labels !== undefined && (!Array.isArray(labels) || labels.length > 0))
      fail('rollgate.demo.forge.invalid_request', 'labels: the demo forge has no labels');
    const [headSha, baseSha] = [await this.branchSha(head), await this.branchSha(base)];
    if (headSha === undefined || baseSha === undefined)
      fail('rollgate.demo.forge.not_found', `no branch ${headSha === undefined ? head : base}`);
    const existing = [...this.pulls.values()].find(
      (p) => p.state === 'open' && p.head === head && p.base === base,
    );
    if (existing)
      fail(
        'rollgate.demo.forge.conflict',
        `pull request already exists for these targets (#${existing.number})`,
      );
    const number = this.pulls.size + 1;
    const pull: DemoForgePull = {
      number,
      url: `${this.webUrl()}/${this.owner}/${this.name}/pulls/${number}`,
      title,
      titles: [title],
      body: text,
      head,
      base,
      state: 'open',
      merged: false,
      headSha,
      comments: [],
    };
    this.pulls.set(number, pull);
    return { status: 201, body: await this.pullObject(pull) };
  }

  private async editPull(pull: DemoForgePull, body: Record<string, unknown>): Promise<Answer> {
    const title = stringField(body, 'title', false);
    const text = stringField(body, 'body', false);
    const state = stringField(body, 'state', false);
    if (state !== undefined && state !== 'open' && state !== 'closed')
      fail('rollgate.demo.forge.invalid_request', 'state must be open or closed');
    if (pull.merged && state !== undefined)
      fail('rollgate.demo.forge.conflict', 'a merged pull request cannot be reopened or closed');
    if (title !== undefined && title !== pull.title) {
      pull.title = title;
      pull.titles.push(title);
    }
    if (text !== undefined) pull.body = text;
    if (state === 'closed' && pull.state === 'open') {
      pull.headSha = (await this.branchSha(pull.head)) ?? pull.headSha;
      pull.state = 'closed';
    } else if (state === 'open') pull.state = 'open';
    return { status: 201, body: await this.pullObject(pull) };
  }

  /** A merge commit of head into base, made with git and stored with the old base as guard. */
  private async merge(pull: DemoForgePull, body: Record<string, unknown>): Promise<Answer> {
    const style = stringField(body, 'Do', true);
    if (style !== 'merge')
      fail('rollgate.demo.forge.not_allowed', `merge style ${style ?? ''} is not allowed here`);
    const expectedHead = stringField(body, 'head_commit_id', false);
    if (pull.merged) fail('rollgate.demo.forge.not_allowed', 'The PR is already merged');
    // Gitea answers a merge of a closed pull request with 404.
    if (pull.state === 'closed') fail('rollgate.demo.forge.not_found', 'The PR is closed');
    const [headSha, baseSha] = [await this.branchSha(pull.head), await this.branchSha(pull.base)];
    if (headSha === undefined || baseSha === undefined)
      fail('rollgate.demo.forge.conflict', 'a branch of the pull request is gone');
    if (expectedHead !== undefined && expectedHead !== '' && expectedHead !== headSha)
      fail('rollgate.demo.forge.conflict', 'head out of date');
    let tree: string;
    try {
      tree = (await git(this.bareDir, ['merge-tree', '--write-tree', baseSha, headSha])).split('\n')[0] ?? '';
    } catch (error) {
      if (error instanceof DemoGitError) fail('rollgate.demo.forge.conflict', 'the branches conflict');
      throw error;
    }
    const message = `Merge pull request '${pull.title}' (#${pull.number}) from ${pull.head} into ${pull.base}`;
    const commit = await git(this.bareDir, [
      'commit-tree',
      tree,
      '-p',
      baseSha,
      '-p',
      headSha,
      '-m',
      message,
    ]);
    try {
      await git(this.bareDir, ['update-ref', '-m', message, `refs/heads/${pull.base}`, commit, baseSha]);
    } catch (error) {
      if (error instanceof DemoGitError)
        fail('rollgate.demo.forge.conflict', `${pull.base} moved during the merge`);
      throw error;
    }
    Object.assign(pull, {
      state: 'closed',
      merged: true,
      headSha,
      mergeCommitSha: commit,
      mergedBaseSha: baseSha,
    } satisfies Partial<DemoForgePull>);
    return { status: 200 };
  }

  private createStatus(sha: string, body: Record<string, unknown>): Answer {
    if (!FULL_SHA.test(sha)) fail('rollgate.demo.forge.invalid_request', 'a status needs a full commit sha');
    const state = stringField(body, 'state', true) as StatusState;
    if (!STATUS_STATES.includes(state))
      fail('rollgate.demo.forge.invalid_request', `state must be one of ${STATUS_STATES.join(', ')}`);
    const status: Status = {
      id: this.nextId++,
      sha,
      state,
      context: stringField(body, 'context', false) || 'default',
      description: stringField(body, 'description', false) ?? '',
      targetUrl: stringField(body, 'target_url', false) ?? '',
      createdAt: new Date().toISOString(),
    };
    this.statuses.push(status);
    return { status: 201, body: this.statusObject(status) };
  }

  private async combinedStatus(ref: string, request: Request): Promise<Answer> {
    const sha = FULL_SHA.test(ref) ? ref : await this.branchSha(ref);
    if (sha === undefined) fail('rollgate.demo.forge.not_found', `no commit ${ref}`);
    const latest = new Map<string, Status>();
    for (const status of this.statuses) if (status.sha === sha) latest.set(status.context, status);
    const statuses = [...latest.values()].sort((a, b) => b.id - a.id);
    const state = WORST_FIRST.find((s) => statuses.some((x) => x.state === s)) ?? '';
    return {
      status: 200,
      body: {
        state,
        sha,
        total_count: statuses.length,
        statuses: pageOf(request.query, statuses).map((s) => this.statusObject(s)),
      },
    };
  }
}

function send(response: ServerResponse, answer: Answer): void {
  const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    ...(text === '' ? {} : { 'content-type': 'application/json;charset=utf-8' }),
    ...answer.headers,
  });
  response.end(text);
}

/**
 * Starts the demo forge on `host:port` (default 127.0.0.1, a free port). Every request needs
 * `Authorization: token <token>`; requests are answered one at a time, so a merge never races a read.
 */
export async function startDemoForge(options: DemoForgeOptions): Promise<DemoForge> {
  if (!/^[^/\s]+\/[^/\s]+$/.test(options.repository))
    throw new Error(`demo forge repository "${options.repository}": write it as owner/name`);
  const token = options.token ?? randomBytes(20).toString('hex');
  const tokenDigest = digest(token);
  let url = '';
  const api = new DemoForgeApi(
    options.bareDir,
    options.repository,
    options.login ?? 'rollgate-demo',
    () => url,
  );
  let queue: Promise<unknown> = Promise.resolve();

  async function answer(message: IncomingMessage): Promise<Answer> {
    const given = /^token\s+(\S+)$/i.exec(message.headers.authorization ?? '')?.[1];
    // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first differing byte.
    if (given === undefined || !timingSafeEqual(digest(given), tokenDigest))
      fail('rollgate.demo.forge.unauthorized', 'user does not exist [uid: 0, name: ]');
    const target = new URL(message.url ?? '/', 'http://demo-forge');
    if (!target.pathname.startsWith('/api/v1/')) fail('rollgate.demo.forge.not_found', 'Not Found');
    const body = await readBody(message);
    return api.serve({
      method: message.method ?? 'GET',
      path: target.pathname.slice('/api/v1'.length),
      query: target.searchParams,
      body,
    });
  }

  const server: Server = createServer((message, response) => {
    const turn = queue.then(async () => {
      try {
        send(response, await answer(message));
      } catch (error) {
        if (error instanceof DemoForgeError)
          send(response, { status: error.status, body: { message: error.message } });
        else
          send(response, {
            status: 500,
            body: { message: error instanceof Error ? error.message : String(error) },
          });
      }
    });
    queue = turn.catch(() => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url,
    apiUrl: `${url}/api/v1`,
    repository: options.repository,
    token,
    pulls: () => api.snapshot(),
    diff: (number) => api.diff(number),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
