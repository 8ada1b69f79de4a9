// GitHub's JSON shapes built from the double's state: complete enough to pass GitHub's REST and webhook schemas.
import type {
  DoubleCheckRun,
  DoubleComment,
  DoubleLabel,
  DoublePull,
  DoubleRepository,
  DoubleReview,
  DoubleStatus,
  DoubleTeam,
  DoubleUser,
} from './forge-state.ts';

type Json = Record<string, unknown>;

/** Where the double answers: the web root (also Git) and the REST root (`<web>/api/v3`, as Enterprise Server). */
export interface GitHubUrls {
  web: string;
  api: string;
}

function nodeId(kind: string, id: number): string {
  return Buffer.from(`${kind}:${id}`).toString('base64');
}

/** A user as GitHub returns it everywhere (fits both the REST simple-user and the webhook user). */
export function userObject(urls: GitHubUrls, user: DoubleUser): Json {
  // An App's bot login (`name[bot]`) is percent-encoded in its URLs, as GitHub writes them.
  const api = `${urls.api}/users/${encodeURIComponent(user.login)}`;
  return {
    login: user.login,
    id: user.id,
    node_id: nodeId('User', user.id),
    avatar_url: `${urls.web}/avatars/u/${user.id}`,
    gravatar_id: '',
    url: api,
    html_url: `${urls.web}/${encodeURIComponent(user.login)}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: user.type,
    site_admin: false,
  };
}

/** `rest` adds `type`, which REST requires and the webhook schema forbids. */
export function teamObject(
  urls: GitHubUrls,
  org: DoubleUser,
  team: DoubleTeam,
  variant: 'rest' | 'webhook',
): Json {
  const api = `${urls.api}/organizations/${org.id}/team/${team.id}`;
  return {
    id: team.id,
    node_id: nodeId('Team', team.id),
    url: api,
    html_url: `${urls.web}/orgs/${org.login}/teams/${team.slug}`,
    name: team.name,
    slug: team.slug,
    description: null,
    privacy: 'closed',
    permission: 'pull',
    members_url: `${api}/members{/member}`,
    repositories_url: `${api}/repos`,
    ...(variant === 'rest' ? { type: 'organization', parent: null } : {}),
  };
}

/** Suffixes of the repository's API URL fields (templates where GitHub gives templates). */
const REPOSITORY_URLS: Array<[string, string]> = [
  ['forks_url', '/forks'],
  ['keys_url', '/keys{/key_id}'],
  ['collaborators_url', '/collaborators{/collaborator}'],
  ['teams_url', '/teams'],
  ['hooks_url', '/hooks'],
  ['issue_events_url', '/issues/events{/number}'],
  ['events_url', '/events'],
  ['assignees_url', '/assignees{/user}'],
  ['branches_url', '/branches{/branch}'],
  ['tags_url', '/tags'],
  ['blobs_url', '/git/blobs{/sha}'],
  ['git_tags_url', '/git/tags{/sha}'],
  ['git_refs_url', '/git/refs{/sha}'],
  ['trees_url', '/git/trees{/sha}'],
  ['statuses_url', '/statuses/{sha}'],
  ['languages_url', '/languages'],
  ['stargazers_url', '/stargazers'],
  ['contributors_url', '/contributors'],
  ['subscribers_url', '/subscribers'],
  ['subscription_url', '/subscription'],
  ['commits_url', '/commits{/sha}'],
  ['git_commits_url', '/git/commits{/sha}'],
  ['comments_url', '/comments{/number}'],
  ['issue_comment_url', '/issues/comments{/number}'],
  ['contents_url', '/contents/{+path}'],
  ['compare_url', '/compare/{base}...{head}'],
  ['merges_url', '/merges'],
  ['archive_url', '/{archive_format}{/ref}'],
  ['downloads_url', '/downloads'],
  ['issues_url', '/issues{/number}'],
  ['pulls_url', '/pulls{/number}'],
  ['milestones_url', '/milestones{/number}'],
  ['notifications_url', '/notifications{?since,all,participating}'],
  ['labels_url', '/labels{/name}'],
  ['releases_url', '/releases{/id}'],
  ['deployments_url', '/deployments'],
];

/** A full repository (REST `repository`, webhook `repository`): the two schemas' required fields together. */
export function repositoryObject(urls: GitHubUrls, repo: DoubleRepository, openIssues: number): Json {
  const api = `${urls.api}/repos/${repo.fullName}`;
  const html = `${urls.web}/${repo.fullName}`;
  const host = new URL(urls.web).host;
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: repo.fullName,
    private: true,
    owner: userObject(urls, repo.owner),
    html_url: html,
    description: null,
    fork: false,
    url: api,
    ...Object.fromEntries(REPOSITORY_URLS.map(([field, suffix]) => [field, `${api}${suffix}`])),
    created_at: repo.createdAt,
    updated_at: repo.pushedAt,
    pushed_at: repo.pushedAt,
    git_url: `git://${host}/${repo.fullName}.git`,
    ssh_url: `git@${host}:${repo.fullName}.git`,
    clone_url: `${html}.git`,
    svn_url: html,
    homepage: null,
    size: 0,
    stargazers_count: 0,
    watchers_count: 0,
    language: null,
    has_issues: true,
    has_projects: false,
    has_downloads: false,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    forks_count: 0,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: openIssues,
    license: null,
    allow_forking: false,
    is_template: false,
    web_commit_signoff_required: false,
    topics: [],
    visibility: 'private',
    forks: 0,
    open_issues: openIssues,
    watchers: 0,
    default_branch: repo.defaultBranch,
    custom_properties: {},
  };
}

/** The short repository inside a combined status (REST `minimal-repository`). */
export function minimalRepositoryObject(urls: GitHubUrls, repo: DoubleRepository): Json {
  const full = repositoryObject(urls, repo, 0);
  const keep = new Set([
    'id',
    'node_id',
    'name',
    'full_name',
    'owner',
    'private',
    'html_url',
    'description',
    'fork',
    'url',
    ...REPOSITORY_URLS.map(([field]) => field),
  ]);
  return Object.fromEntries(Object.entries(full).filter(([key]) => keep.has(key)));
}

export function labelObject(urls: GitHubUrls, repo: DoubleRepository, label: DoubleLabel): Json {
  return {
    id: label.id,
    node_id: nodeId('Label', label.id),
    url: `${urls.api}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    // The pull request schemas type a label's description as a string (no null), so the double sets one.
    description: '',
    color: label.color,
    default: false,
  };
}

/** The commits the pull request's branches point at (live for an open one, frozen once closed). */
export interface PullShas {
  head: string;
  base: string;
}

/**
 * A pull request. `full` is the single-PR shape (GET/POST/PATCH and webhooks: merge and diff counters
 * included); the list endpoint leaves those out, as GitHub does.
 */
export function pullObject(
  urls: GitHubUrls,
  repo: DoubleRepository,
  pull: DoublePull,
  shas: PullShas,
  options: {
    full: boolean;
    teams: (slug: string) => DoubleTeam | undefined;
    users: (login: string) => DoubleUser;
    openIssues: number;
    variant: 'rest' | 'webhook';
  },
): Json {
  const api = `${urls.api}/repos/${repo.fullName}`;
  const self = `${api}/pulls/${pull.number}`;
  const html = `${urls.web}/${repo.fullName}/pull/${pull.number}`;
  const repository = repositoryObject(urls, repo, options.openIssues);
  const owner = userObject(urls, repo.owner);
  const link = (href: string): Json => ({ href });
  const merged = pull.mergedAt !== undefined;
  const object: Json = {
    url: self,
    id: pull.id,
    node_id: nodeId('PullRequest', pull.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${api}/issues/${pull.number}`,
    commits_url: `${self}/commits`,
    review_comments_url: `${self}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${pull.number}/comments`,
    statuses_url: `${api}/statuses/${shas.head}`,
    number: pull.number,
    state: pull.state,
    locked: false,
    title: pull.title,
    user: userObject(urls, pull.user),
    body: pull.body.length > 0 ? pull.body : null,
    labels: pull.labels
      .map((name) => {
        const label = repo.labels.get(name);
        return label ? labelObject(urls, repo, label) : undefined;
      })
      .filter((label) => label !== undefined),
    milestone: null,
    active_lock_reason: null,
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: pull.closedAt ?? null,
    merged_at: pull.mergedAt ?? null,
    merge_commit_sha: pull.mergeCommitSha ?? null,
    assignee: null,
    assignees: [],
    requested_reviewers: pull.requestedReviewers.map((login) => userObject(urls, options.users(login))),
    requested_teams: pull.requestedTeams
      .map((slug) => options.teams(slug))
      .filter((team) => team !== undefined)
      .map((team) => teamObject(urls, repo.owner, team, options.variant)),
    head: {
      label: `${repo.owner.login}:${pull.head}`,
      ref: pull.head,
      sha: shas.head,
      user: owner,
      repo: repository,
    },
    base: {
      label: `${repo.owner.login}:${pull.base}`,
      ref: pull.base,
      sha: shas.base,
      user: owner,
      repo: repository,
    },
    _links: {
      self: link(self),
      html: link(html),
      issue: link(`${api}/issues/${pull.number}`),
      comments: link(`${api}/issues/${pull.number}/comments`),
      review_comments: link(`${self}/comments`),
      review_comment: link(`${api}/pulls/comments{/number}`),
      commits: link(`${self}/commits`),
      statuses: link(`${api}/statuses/${shas.head}`),
    },
    author_association: 'OWNER',
    auto_merge: null,
    draft: pull.draft,
  };
  if (options.full) {
    Object.assign(object, {
      merged,
      mergeable: pull.state === 'open' ? true : null,
      rebaseable: pull.state === 'open' ? true : null,
      mergeable_state: pull.state === 'open' ? 'clean' : 'unknown',
      merged_by: merged && pull.mergedBy ? userObject(urls, pull.mergedBy) : null,
      comments: repo.comments.filter((comment) => comment.issueNumber === pull.number).length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits: 1,
      additions: 0,
      deletions: 0,
      changed_files: 0,
    });
  }
  return object;
}

/** A review as GET …/pulls/{n}/reviews lists it (REST `pull-request-review`). */
export function reviewObject(urls: GitHubUrls, repo: DoubleRepository, review: DoubleReview): Json {
  const html = `${urls.web}/${repo.fullName}/pull/${review.pullNumber}#pullrequestreview-${review.id}`;
  const pullUrl = `${urls.api}/repos/${repo.fullName}/pulls/${review.pullNumber}`;
  return {
    id: review.id,
    node_id: nodeId('PullRequestReview', review.id),
    user: userObject(urls, review.user),
    body: review.body,
    state: review.state,
    html_url: html,
    pull_request_url: pullUrl,
    _links: { html: { href: html }, pull_request: { href: pullUrl } },
    submitted_at: review.submittedAt,
    commit_id: review.commitId,
    author_association: 'COLLABORATOR',
  };
}

export function commentObject(urls: GitHubUrls, repo: DoubleRepository, comment: DoubleComment): Json {
  const api = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: comment.id,
    node_id: nodeId('IssueComment', comment.id),
    url: `${api}/issues/comments/${comment.id}`,
    html_url: `${urls.web}/${repo.fullName}/pull/${comment.issueNumber}#issuecomment-${comment.id}`,
    body: comment.body,
    user: userObject(urls, comment.user),
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
    issue_url: `${api}/issues/${comment.issueNumber}`,
    author_association: 'OWNER',
  };
}

/** A status as POST /statuses answers it (REST `status`). */
export function statusObject(urls: GitHubUrls, repo: DoubleRepository, status: DoubleStatus): Json {
  return {
    url: `${urls.api}/repos/${repo.fullName}/statuses/${status.sha}`,
    avatar_url: null,
    id: status.id,
    node_id: nodeId('StatusContext', status.id),
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    context: status.context,
    created_at: status.createdAt,
    updated_at: status.createdAt,
    creator: userObject(urls, status.creator),
  };
}

/** A status inside a combined status (REST `simple-commit-status`). */
export function simpleStatusObject(urls: GitHubUrls, repo: DoubleRepository, status: DoubleStatus): Json {
  const { creator: _creator, ...rest } = statusObject(urls, repo, status);
  return rest;
}

export function checkRunObject(urls: GitHubUrls, repo: DoubleRepository, run: DoubleCheckRun): Json {
  return {
    id: run.id,
    head_sha: run.sha,
    node_id: nodeId('CheckRun', run.id),
    external_id: null,
    url: `${urls.api}/repos/${repo.fullName}/check-runs/${run.id}`,
    html_url: `${urls.web}/${repo.fullName}/runs/${run.id}`,
    details_url: null,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      title: null,
      summary: null,
      text: null,
      annotations_count: 0,
      annotations_url: `${urls.api}/repos/${repo.fullName}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: run.id },
    app: null,
    pull_requests: [],
  };
}

/** GitHub's error body; `errors` entries are what a 422 explains itself with. */
export function errorBody(
  message: string,
  status: number,
  errors?: Array<{ resource?: string; field?: string; code: string; message?: string }>,
): Json {
  return {
    message,
    documentation_url: 'https://docs.github.com/rest',
    status: String(status),
    ...(errors ? { errors } : {}),
  };
}
