// The forge double's core: one loopback HTTP server with real bare repositories over Git smart HTTP, token auth, and forge APIs mounted beside.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { serveGitRepositories, type GitServer } from '../../../src/git/smart-http-server.ts';
import { gitAsync, makeTempDir, type TempDir } from '../git-fixtures.ts';
import {
  branchSha,
  branchShas,
  commitFiles,
  isAncestor,
  listRefs,
  moveBranch,
  runGit,
} from './bare-repository.ts';
import { FaultQueue } from './faults.ts';
import {
  doubleApp,
  installationTokenText,
  type DoubleApp,
  type MintedInstallationToken,
} from './github-apps.ts';
import {
  IdSequence,
  type DoubleCheckRun,
  type DoubleRepository,
  type DoubleReview,
  type DoubleTeam,
  type DoubleUser,
  type TokenGrant,
} from './forge-state.ts';
import { createGitHubApi } from './github-api.ts';
import type { GitHubUrls } from './github-objects.ts';
import { GitHubWebhooks } from './github-webhooks.ts';

/** A request as an API mount sees it (path relative to the mount, still percent-encoded). */
export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON, except a string or Buffer, which is sent as is (give its content-type in `headers`). */
  body?: unknown;
}

/** A branch moved on the double (git push, server-side commit or merge); `undefined` = absent before/after. */
export interface RefUpdate {
  repo: DoubleRepository;
  ref: string;
  before?: string;
  after?: string;
  /** The old head is not in the new history. */
  forced: boolean;
  pusher: DoubleUser;
}

/** What serves one forge's API on the double. */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>;

/** A request the double refused as not matching the forge's API description, or an answer that did not. */
export interface ContractViolation {
  method: string;
  path: string;
  problems: string[];
}

/** Every request the double received (API and Git), for tests that count attempts. */
export interface RecordedRequest {
  kind: 'api' | 'git';
  method: string;
  path: string;
  status?: number;
}

/** Options of {@link startForgeDouble}. */
export interface ForgeDoubleOptions {
  /** The token the default bot account holds (full permissions). */
  token?: string;
  /** Login of the account that owns the default token. */
  botLogin?: string;
  /**
   * The double's time for what expires (installation tokens, App JWTs); default the wall clock. A test
   * advances a ManualClock to expire tokens without waiting.
   */
  clock?: { now(): Date };
  /** How long an installation token lives (default 60 s; GitHub's live an hour). */
  installationTokenLifeMs?: number;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const GIT_PATH = /^\/([^/]+)\/([^/]+?)\.git(\/.*)?$/;

/**
 * A forge on 127.0.0.1 for tests: bare repositories served by the real `git http-backend` (through
 * src/git's bridge), GitHub's REST API under `/api/v3` (Enterprise Server's layout) and at the root
 * (api.github.com's), pull requests and statuses in memory, merges made with real Git.
 */
export class ForgeDouble {
  readonly ids = new IdSequence();
  readonly faults = new FaultQueue();
  /** Requests that do not match GitHub's description (each was answered 422 or 501). Tests assert it empty. */
  readonly invalidRequests: ContractViolation[] = [];
  /** Answers of the double that do not match GitHub's description (a bug in the double). */
  readonly invalidResponses: ContractViolation[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly users = new Map<string, DoubleUser>();
  readonly teams = new Map<string, DoubleTeam>();
  readonly tokens = new Map<string, TokenGrant>();
  /** Tokens that expire (installation tokens): token → epoch ms on {@link clock}. */
  readonly tokenExpiries = new Map<string, number>();
  /** GitHub Apps by id (see {@link addApp}). */
  readonly apps = new Map<string, DoubleApp>();
  /** Every installation token minted, oldest first. */
  readonly mintedTokens: MintedInstallationToken[] = [];
  readonly clock: { now(): Date };
  readonly installationTokenLifeMs: number;
  readonly repositories = new Map<string, DoubleRepository>();
  readonly bot: DoubleUser;
  readonly token: string;
  readonly urls: GitHubUrls;
  readonly webhooks: GitHubWebhooks;
  private readonly handleGitHub: (request: ApiRequest) => Promise<ApiResponse>;
  /** Other forges' APIs mounted beside GitHub's (GitLab under /api/v4, Gitea under /api/v1). */
  private readonly mounts: Array<{ prefix: string; handle: ApiHandler }> = [];
  private readonly refListeners: Array<(update: RefUpdate) => Promise<void> | void> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly dir: TempDir,
    private readonly server: Server,
    private readonly git: GitServer,
    readonly url: string,
    options: ForgeDoubleOptions,
  ) {
    this.urls = { web: url, api: `${url}/api/v3` };
    this.clock = options.clock ?? { now: () => new Date() };
    this.installationTokenLifeMs = options.installationTokenLifeMs ?? 60_000;
    this.token = options.token ?? `ghp_double${Math.random().toString(36).slice(2)}`;
    this.bot = this.addUser(options.botLogin ?? 'rollgate-bot', 'Bot');
    this.addToken(this.token, { user: this.bot });
    this.webhooks = new GitHubWebhooks(this.urls);
    this.handleGitHub = createGitHubApi(this);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.route(req, res).catch((error: unknown) => {
        // Over already (the client went away mid-answer, or the answer was sent before the failure):
        // nothing left to tell it, and a second end would throw out of the test's process.
        if (res.writableEnded || res.destroyed) return;
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`forge double failed: ${error instanceof Error ? error.stack : String(error)}`);
      });
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: ForgeDoubleOptions = {}): Promise<ForgeDouble> {
    const dir = makeTempDir('rollgate-forge-double-');
    mkdirSync(join(dir.path, 'repos'));
    const git = await serveGitRepositories({ root: join(dir.path, 'repos'), receivePack: true });
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    return new ForgeDouble(dir, server, git, `http://127.0.0.1:${port}`, options);
  }

  /** GitHub API root in Enterprise Server form (`<url>/api/v3`). */
  get githubApiUrl(): string {
    return this.urls.api;
  }

  /** Serves another forge's API under `prefix` (e.g. `/api/v4`); its handler sees paths relative to it. */
  mount(prefix: string, handle: ApiHandler): void {
    this.mounts.push({ prefix, handle });
  }

  addUser(login: string, type: DoubleUser['type'] = 'User'): DoubleUser {
    const existing = this.users.get(login.toLowerCase());
    if (existing) return existing;
    const user: DoubleUser = { login, id: this.ids.take(), type };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  /** Issues a token; permissions default to write on everything Rollgate uses. */
  addToken(token: string, grant: Partial<TokenGrant> & { user: DoubleUser }): void {
    this.tokens.set(token, { contents: 'write', pullRequests: 'write', statuses: 'write', ...grant });
  }

  /**
   * Registers a GitHub App (its public key in PEM) installed on `account` as `installationId`; its tokens act
   * as the bot `<slug>[bot]` with write access to what Rollgate uses.
   */
  addApp(options: {
    appId: string;
    publicKeyPem: string;
    installationId: number;
    account: string;
    slug?: string;
  }): DoubleApp {
    const bot = this.addUser(`${options.slug ?? 'rollgate'}[bot]`, 'Bot');
    const app = doubleApp(
      options.appId,
      options.publicKeyPem,
      new Map([[options.installationId, options.account]]),
      bot,
    );
    this.apps.set(options.appId, app);
    return app;
  }

  /** Mints an installation token of `app` (what `POST /app/installations/{id}/access_tokens` does). */
  mintInstallationToken(app: DoubleApp, installationId: number): MintedInstallationToken {
    const token = installationTokenText();
    const expiresAtMs = this.clock.now().getTime() + this.installationTokenLifeMs;
    this.addToken(token, { user: app.bot });
    this.tokenExpiries.set(token, expiresAtMs);
    const minted = { appId: app.appId, installationId, token, expiresAtMs };
    this.mintedTokens.push(minted);
    return minted;
  }

  addTeam(slug: string, name = slug): DoubleTeam {
    const team: DoubleTeam = { id: this.ids.take(), slug, name };
    this.teams.set(slug, team);
    return team;
  }

  /**
   * Creates `owner/name` as a bare repository with one commit holding `files` on `defaultBranch`. The
   * bot is a collaborator; others can be added to `collaborators`.
   */
  async createRepository(
    fullName: string,
    options: { defaultBranch?: string; files?: Record<string, string> } = {},
  ): Promise<DoubleRepository> {
    const [ownerLogin, name] = fullName.split('/');
    if (!ownerLogin || !name) throw new Error(`repository must be owner/name: ${fullName}`);
    const defaultBranch = options.defaultBranch ?? 'main';
    const path = join(this.dir.path, 'repos', ownerLogin, `${name}.git`);
    mkdirSync(path, { recursive: true });
    await gitAsync(path, ['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`]);
    const first = await commitFiles(path, {
      files: options.files ?? { 'README.md': `# ${name}\n` },
      message: 'initial commit',
    });
    await moveBranch(path, defaultBranch, first);
    const now = new Date().toISOString();
    const repo: DoubleRepository = {
      id: this.ids.take(),
      owner: this.addUser(ownerLogin, 'Organization'),
      name,
      fullName,
      defaultBranch,
      path,
      createdAt: now,
      pushedAt: now,
      pulls: new Map(),
      nextNumber: 1,
      comments: [],
      labels: new Map(),
      statuses: [],
      checkRuns: [],
      reviews: [],
      collaborators: new Set([this.bot.login.toLowerCase()]),
    };
    this.repositories.set(fullName.toLowerCase(), repo);
    return repo;
  }

  repository(fullName: string): DoubleRepository {
    const repo = this.repositories.get(fullName.toLowerCase());
    if (!repo) throw new Error(`no repository ${fullName} on the forge double`);
    return repo;
  }

  /** Clone URL carrying the token as GitHub accepts it (`x-access-token:<token>`). */
  gitUrl(fullName: string, token: string | undefined = this.token): string {
    const credentials = token === undefined ? '' : `x-access-token:${encodeURIComponent(token)}@`;
    return `${this.url.replace('://', `://${credentials}`)}/${fullName}.git`;
  }

  branchSha(fullName: string, branch: string): Promise<string | undefined> {
    return branchSha(this.repository(fullName).path, branch);
  }

  /**
   * Commits `files` on `branch` on the server side (as GitHub's web editor would: no clone, no Git
   * transport), from the branch itself when it exists, else from `from` (default branch). Sends the push
   * webhook like any other branch move. Fast: what tests use to set a scene.
   */
  async commit(
    fullName: string,
    branch: string,
    files: Record<string, string | null>,
    options: { from?: string; message?: string; pusher?: DoubleUser } = {},
  ): Promise<string> {
    const repo = this.repository(fullName);
    const from = options.from ?? repo.defaultBranch;
    const shas = await branchShas(repo.path, [branch, from]);
    const current = shas.get(branch);
    const parent = current ?? shas.get(from);
    const sha = await commitFiles(repo.path, {
      parent,
      files,
      message: options.message ?? `change on ${branch}`,
    });
    if (!(await moveBranch(repo.path, branch, sha, current)))
      throw new Error(`${branch} moved while committing`);
    repo.pushedAt = new Date().toISOString();
    await this.announceRefUpdate(repo, `refs/heads/${branch}`, current, sha, options.pusher ?? this.bot);
    return sha;
  }

  /**
   * Commits `files` on `branch` and pushes it through the double's Git endpoint (auth, push webhooks):
   * the branch continues from itself when it exists, else from `from` (default branch).
   */
  async pushCommit(
    fullName: string,
    branch: string,
    files: Record<string, string | null>,
    options: { from?: string; message?: string; token?: string } = {},
  ): Promise<string> {
    const repo = this.repository(fullName);
    const start = (await branchSha(repo.path, branch)) ? branch : (options.from ?? repo.defaultBranch);
    const work = makeTempDir('rollgate-forge-push-');
    try {
      const remote = this.gitUrl(fullName, options.token);
      await gitAsync(work.path, ['clone', '--quiet', '--branch', start, remote, 'w']);
      const copy = join(work.path, 'w');
      for (const [file, content] of Object.entries(files)) {
        const target = join(copy, file);
        if (content === null) rmSync(target, { force: true });
        else {
          mkdirSync(dirname(target), { recursive: true });
          writeFileSync(target, content);
        }
      }
      await gitAsync(copy, ['add', '--all']);
      await gitAsync(copy, [
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        options.message ?? `change on ${branch}`,
      ]);
      await gitAsync(copy, ['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`]);
      return await gitAsync(copy, ['rev-parse', 'HEAD']);
    } finally {
      work.remove();
    }
  }

  /** Records a check run on `sha` (as a CI app would create it). */
  addCheckRun(
    fullName: string,
    sha: string,
    run: { name: string; status?: DoubleCheckRun['status']; conclusion?: DoubleCheckRun['conclusion'] },
  ): DoubleCheckRun {
    const now = new Date().toISOString();
    const status = run.status ?? (run.conclusion ? 'completed' : 'in_progress');
    const checkRun: DoubleCheckRun = {
      id: this.ids.take(),
      sha,
      name: run.name,
      status,
      conclusion: status === 'completed' ? (run.conclusion ?? 'success') : null,
      startedAt: now,
      completedAt: status === 'completed' ? now : null,
    };
    this.repository(fullName).checkRuns.push(checkRun);
    return checkRun;
  }

  /** Records a review of pull request `number` by `login` on its current head (as a person would submit it). */
  async addReview(
    fullName: string,
    number: number,
    login: string,
    state: DoubleReview['state'] = 'APPROVED',
  ): Promise<DoubleReview> {
    const repo = this.repository(fullName);
    const pull = repo.pulls.get(number);
    if (pull === undefined) throw new Error(`no pull request #${number} in ${fullName}`);
    const user = this.users.get(login.toLowerCase()) ?? this.addUser(login);
    const review: DoubleReview = {
      id: this.ids.take(),
      pullNumber: number,
      user,
      state,
      body: '',
      commitId: (await branchSha(repo.path, pull.head)) ?? '',
      submittedAt: new Date().toISOString(),
    };
    repo.reviews.push(review);
    return review;
  }

  /** Tells `listener` about every branch move (another forge's push webhooks); GitHub's are built in. */
  onRefUpdate(listener: (update: RefUpdate) => Promise<void> | void): void {
    this.refListeners.push(listener);
  }

  /** Registers a receiver: every event is POSTed to `url`, signed with `secret` (X-Hub-Signature-256). */
  onWebhook(url: string, secret: string): void {
    this.webhooks.register(url, secret);
  }

  /** Waits for every webhook delivery started so far. */
  flushWebhooks(): Promise<void> {
    return this.webhooks.flush();
  }

  /** Every way the traffic so far broke GitHub's descriptions (requests, answers, webhook payloads). */
  violations(): string[] {
    const format = (kind: string) => (violation: ContractViolation) =>
      `${kind} ${violation.method} ${violation.path}: ${violation.problems.join('; ')}`;
    return [
      ...this.invalidRequests.map(format('request')),
      ...this.invalidResponses.map(format('response')),
      ...this.webhooks.invalid.map((problem) => `webhook ${problem}`),
    ];
  }

  /** Clears recorded violations, requests and queued faults (between tests sharing one double). */
  reset(): void {
    this.invalidRequests.length = 0;
    this.invalidResponses.length = 0;
    this.webhooks.invalid.length = 0;
    this.requests.length = 0;
    this.faults.clear();
  }

  async stop(): Promise<void> {
    await this.webhooks.flush();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    await this.git.stop();
    this.dir.remove();
  }

  /** The grant of a `token`/`Bearer` Authorization header or of basic-auth credentials' password; none once expired. */
  grantFor(authorization: string | undefined): TokenGrant | undefined {
    const grant = this.grantOfCredentials(authorization);
    if (grant === undefined) return undefined;
    return grant.expiresAtMs !== undefined && this.clock.now().getTime() >= grant.expiresAtMs
      ? undefined
      : grant.grant;
  }

  private grantOfCredentials(
    authorization: string | undefined,
  ): { grant: TokenGrant; expiresAtMs: number | undefined } | undefined {
    const token = this.tokenOf(authorization);
    const grant = token === undefined ? undefined : this.tokens.get(token);
    return grant === undefined || token === undefined
      ? undefined
      : { grant, expiresAtMs: this.tokenExpiries.get(token) };
  }

  private tokenOf(authorization: string | undefined): string | undefined {
    if (!authorization) return undefined;
    const bearer = /^(?:token|bearer)\s+(\S+)$/i.exec(authorization);
    if (bearer?.[1]) return bearer[1];
    const basic = /^basic\s+(\S+)$/i.exec(authorization);
    if (basic?.[1]) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      // GitHub takes the token as password with any user name (x-access-token by convention), or alone.
      const password = colon === -1 ? decoded : decoded.slice(colon + 1);
      if (this.tokens.has(password)) return password;
      const user = decoded.slice(0, colon);
      return this.tokens.has(user) ? user : undefined;
    }
    return undefined;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    const gitPath = GIT_PATH.exec(rawPath);
    if (gitPath) {
      await this.serveGit(req, res, `${gitPath[1]}/${gitPath[2]}`, gitPath[3] ?? '/');
      return;
    }
    const mounted = this.mounts.find((mount) => rawPath.startsWith(`${mount.prefix}/`));
    const path = mounted
      ? rawPath.slice(mounted.prefix.length)
      : rawPath.startsWith('/api/v3/')
        ? rawPath.slice('/api/v3'.length)
        : rawPath;
    const rawBody = await readBody(req);
    const recorded: RecordedRequest = { kind: 'api', method: req.method ?? 'GET', path };
    this.requests.push(recorded);
    const answer = await (mounted?.handle ?? this.handleGitHub)({
      method: req.method ?? 'GET',
      path,
      query: url.searchParams,
      headers: req.headers,
      rawBody,
    });
    recorded.status = answer.status;
    const raw = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
    const body =
      answer.body === undefined ? '' : raw ? (answer.body as string | Buffer) : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      ...(answer.body === undefined || raw ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      ...answer.headers,
    });
    res.end(body);
  }

  /** Git smart HTTP: basic auth with a token, then the request is relayed to `git http-backend`. */
  private async serveGit(
    req: IncomingMessage,
    res: ServerResponse,
    fullName: string,
    rest: string,
  ): Promise<void> {
    const recorded: RecordedRequest = { kind: 'git', method: req.method ?? 'GET', path: req.url ?? '/' };
    this.requests.push(recorded);
    const deny = (status: number, text: string, headers: Record<string, string> = {}): void => {
      recorded.status = status;
      req.resume();
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
      res.end(`${text}\n`);
    };
    const grant = this.grantFor(req.headers.authorization);
    if (!grant) {
      deny(401, 'Invalid username or token.', { 'www-authenticate': 'Basic realm="GitHub"' });
      return;
    }
    const repo = this.repositories.get(fullName.toLowerCase());
    if (!repo) {
      deny(404, 'Repository not found.');
      return;
    }
    const pushing =
      rest.endsWith('/git-receive-pack') ||
      new URL(req.url ?? '/', this.url).searchParams.get('service') === 'git-receive-pack';
    if (pushing && grant.contents !== 'write') {
      deny(403, `Permission to ${repo.fullName}.git denied to ${grant.user.login}.`);
      return;
    }
    const before = pushing && req.method === 'POST' ? await listRefs(repo.path) : undefined;
    const target = new URL(
      `/${repo.owner.login}/${repo.name}.git${rest}${(req.url ?? '').includes('?') ? `?${(req.url ?? '').split('?')[1]}` : ''}`,
      this.git.url,
    );
    const headers = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    // A push's answer ends only once its ref updates are announced: a pusher that goes on to open a pull
    // request then finds CI's reaction to the push (a check run a test registers) already there, however
    // slow the git calls that work out the push event are on a loaded machine.
    await new Promise<void>((resolve) => {
      const upstream = httpRequest(target, { method: req.method, headers }, (answer) => {
        recorded.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res, { end: before === undefined });
        answer.on('end', resolve);
        answer.on('error', resolve);
      });
      upstream.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`git backend unreachable: ${error.message}\n`);
        resolve();
      });
      req.pipe(upstream);
    });
    if (before === undefined) return;
    try {
      await this.announcePush(repo, before, grant.user);
    } finally {
      res.end();
    }
  }

  /** Compares refs before and after a receive-pack and sends one push event per moved branch. */
  private async announcePush(
    repo: DoubleRepository,
    before: Map<string, string>,
    pusher: DoubleUser,
  ): Promise<void> {
    const after = await listRefs(repo.path);
    const names = new Set([...before.keys(), ...after.keys()]);
    for (const ref of names) {
      const old = before.get(ref);
      const now = after.get(ref);
      if (old === now || !ref.startsWith('refs/heads/')) continue;
      repo.pushedAt = new Date().toISOString();
      await this.announceRefUpdate(repo, ref, old, now, pusher);
    }
  }

  /** One push event for one ref update, whoever moved it (a git push or a merge through the API). */
  async announceRefUpdate(
    repo: DoubleRepository,
    ref: string,
    before: string | undefined,
    after: string | undefined,
    pusher: DoubleUser,
  ): Promise<void> {
    // Working out what a push event says takes several git calls: only when someone listens.
    if (!this.webhooks.registered && this.refListeners.length === 0) return;
    const forced =
      before !== undefined && after !== undefined && !(await isAncestor(repo.path, before, after));
    const otherHeads = [...(await listRefs(repo.path)).entries()]
      .filter(([name]) => name.startsWith('refs/heads/') && name !== ref)
      .map(([, sha]) => sha);
    await this.webhooks.push(repo, { ref, before, after, forced, pusher, otherHeads });
    for (const listener of this.refListeners) await listener({ repo, ref, before, after, forced, pusher });
  }

  /** Runs git in a repository of the double (for tests that inspect history). */
  gitIn(fullName: string, args: string[]): Promise<string> {
    return runGit(this.repository(fullName).path, args).then((result) => result.stdout);
  }
}

/** Starts a forge double on a random loopback port. */
export function startForgeDouble(options: ForgeDoubleOptions = {}): Promise<ForgeDouble> {
  return ForgeDouble.start(options);
}
