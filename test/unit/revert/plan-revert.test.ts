// The revert planner: which commit is undone, which files the branch holds, which objects come back with the pods.
import { describe, expect, it } from 'vitest';
import {
  planRevert,
  restoredObjects,
  revertBranch,
  type RevertPlanInput,
} from '../../../src/revert/plan-revert.ts';

const rolloutFile = (image: string) =>
  [
    'apiVersion: argoproj.io/v1alpha1',
    'kind: Rollout',
    'metadata: { name: web }',
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    `        - name: app # the web server`,
    `          image: ${image}`,
    '',
  ].join('\n');
const configFile = (level: string, extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: web-config }\ndata: { LOG_LEVEL: ${level}${extra} }\n`;
const secretFile = (token: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: { name: web-secret }\nstringData: { token: ${token} }\n`;

const OLD = rolloutFile('registry.example/web:1.0.0');
const NEW = rolloutFile('registry.example/web:2.0.0');
const OLD_CONFIG = configFile('info');
const NEW_CONFIG = configFile('debug');

/** An aborted revision `h2` of staging's `web`, introduced by commit c2 (image + ConfigMap). */
function input(
  overrides: Partial<RevertPlanInput> = {},
  rollout: Partial<RevertPlanInput['rollout']> = {},
): RevertPlanInput {
  return {
    source: { name: 'staging', path: 'envs/staging', namespace: 'shop' },
    rollout: {
      namespace: 'shop',
      name: 'web',
      revision: 'h2',
      aborted: true,
      abortMessage: 'metric "errors" assessed Failed',
      commit: 'c2c2c2c2c2',
      ...rollout,
    },
    commit: {
      sha: 'c2c2c2c2c2',
      parent: 'c1c1c1c1c1',
      subject: 'web 2.0.0 with debug logs',
      changes: [
        { path: 'envs/staging/web.yaml', before: OLD, after: NEW },
        { path: 'envs/staging/config.yaml', before: OLD_CONFIG, after: NEW_CONFIG },
      ],
    },
    tip: {
      sha: 'c2c2c2c2c2',
      files: [
        { path: 'envs/staging/web.yaml', text: NEW },
        { path: 'envs/staging/config.yaml', text: NEW_CONFIG },
      ],
    },
    ...overrides,
  };
}

const kinds = (plan: ReturnType<typeof planRevert>) => plan.actions.map((action) => action.kind);
const pushed = (plan: ReturnType<typeof planRevert>) =>
  plan.actions.flatMap((action) => (action.kind === 'pushBranch' ? action.files : []));

describe('planRevert', () => {
  const rows: Array<{
    name: string;
    given: RevertPlanInput;
    wantState: string;
    wantKinds: string[];
    wantMode?: string;
    wantFiles?: Array<{ path: string; text: string | null }>;
  }> = [
    {
      name: 'not aborted: nothing',
      given: input({}, { aborted: false }),
      wantState: 'not-aborted',
      wantKinds: [],
    },
    {
      name: 'aborted without a known commit: nothing (no guess at what to undo)',
      given: input({}, { commit: undefined }),
      wantState: 'unknown-commit',
      wantKinds: [],
    },
    {
      name: "the commit read is not the Rollout's: nothing",
      given: input({}, { commit: 'ffffffff' }),
      wantState: 'unknown-commit',
      wantKinds: [],
    },
    {
      name: 'a commit of this source only, untouched since: a true revert, the ConfigMap restored first',
      given: input(),
      wantState: 'opening',
      wantMode: 'revert',
      wantKinds: ['restoreObject', 'pushBranch', 'openPullRequest', 'recordPullRequest'],
      wantFiles: [
        { path: 'envs/staging/web.yaml', text: OLD },
        { path: 'envs/staging/config.yaml', text: OLD_CONFIG },
      ],
    },
    {
      name: 'a commit that added a file: the revert removes it',
      given: input({
        commit: {
          sha: 'c2c2c2c2c2',
          parent: 'c1',
          subject: 's',
          changes: [
            { path: 'envs/staging/web.yaml', before: OLD, after: NEW },
            {
              path: 'envs/staging/extra.yaml',
              after: 'apiVersion: v1\nkind: Service\nmetadata: { name: x }\n',
            },
          ],
        },
        tip: {
          sha: 'c2',
          files: [
            { path: 'envs/staging/web.yaml', text: NEW },
            {
              path: 'envs/staging/extra.yaml',
              text: 'apiVersion: v1\nkind: Service\nmetadata: { name: x }\n',
            },
          ],
        },
      }),
      wantState: 'opening',
      wantMode: 'revert',
      wantKinds: ['pushBranch', 'openPullRequest', 'recordPullRequest'],
      wantFiles: [
        { path: 'envs/staging/web.yaml', text: OLD },
        { path: 'envs/staging/extra.yaml', text: null },
      ],
    },
    {
      name: "a commit that also changed prod: only the Rollout's previous image, byte for byte",
      given: input({
        commit: {
          sha: 'c2c2c2c2c2',
          parent: 'c1',
          subject: 's',
          changes: [
            { path: 'envs/staging/web.yaml', before: OLD, after: NEW },
            { path: 'envs/prod/web.yaml', before: OLD, after: NEW },
          ],
        },
      }),
      wantState: 'opening',
      wantMode: 'restore-rollout',
      wantKinds: ['pushBranch', 'openPullRequest', 'recordPullRequest'],
      wantFiles: [{ path: 'envs/staging/web.yaml', text: OLD }],
    },
    {
      name: "a later commit changed the ConfigMap file: only the Rollout's image, the later change kept",
      given: input({
        tip: {
          sha: 'c3',
          files: [
            { path: 'envs/staging/web.yaml', text: NEW },
            { path: 'envs/staging/config.yaml', text: configFile('debug', ', COLOR: blue') },
          ],
        },
      }),
      wantState: 'opening',
      wantMode: 'restore-rollout',
      wantKinds: ['restoreObject', 'pushBranch', 'openPullRequest', 'recordPullRequest'],
      wantFiles: [{ path: 'envs/staging/web.yaml', text: OLD }],
    },
    {
      name: 'the branch already went back by hand: no pull request, the ConfigMap still restored',
      given: input({
        tip: {
          sha: 'c3',
          files: [
            { path: 'envs/staging/web.yaml', text: OLD },
            { path: 'envs/staging/config.yaml', text: OLD_CONFIG },
          ],
        },
      }),
      wantState: 'in-git',
      wantKinds: ['restoreObject'],
    },
    {
      name: 'its pull request is open (found by branch after a restart): nothing written again',
      given: input({ pullRequest: { number: 4, url: 'http://forge/pr/4' } }, { recordedRevision: 'h2' }),
      wantState: 'open',
      wantKinds: ['restoreObject'],
    },
    {
      name: 'its pull request is open but not recorded on the Rollout (crash between): recorded',
      given: input({ pullRequest: { number: 4, url: 'http://forge/pr/4' } }),
      wantState: 'open',
      wantKinds: ['restoreObject', 'recordPullRequest'],
    },
    {
      name: 'its pull request was closed unmerged: never a second one',
      given: input({}, { recordedRevision: 'h2' }),
      wantState: 'closed',
      wantKinds: ['restoreObject'],
    },
    {
      name: "an older revision's record does not stop a new revision's pull request",
      given: input({}, { recordedRevision: 'h1' }),
      wantState: 'opening',
      wantMode: 'revert',
      wantKinds: ['restoreObject', 'pushBranch', 'openPullRequest', 'recordPullRequest'],
    },
    {
      name: 'the parent commit had no such Rollout in the changed files: refused, ConfigMap restored',
      given: input({
        commit: {
          sha: 'c2c2c2c2c2',
          parent: 'c1',
          subject: 's',
          changes: [
            { path: 'envs/staging/web.yaml', after: NEW },
            { path: 'envs/staging/config.yaml', before: OLD_CONFIG, after: NEW_CONFIG },
            { path: 'README.md', before: 'a', after: 'b' },
          ],
        },
      }),
      wantState: 'refused',
      wantKinds: ['restoreObject'],
    },
  ];

  it.each(rows)('$name', ({ given, wantState, wantKinds, wantMode, wantFiles }) => {
    const plan = planRevert(given);
    expect(plan.state).toBe(wantState);
    expect(kinds(plan)).toEqual(wantKinds);
    if (wantMode !== undefined) expect(plan.mode).toBe(wantMode);
    if (wantFiles !== undefined) expect(pushed(plan)).toEqual(wantFiles);
  });

  it('one branch per aborted revision; the pull request says what aborted, what is undone and that it is never merged by itself', () => {
    const plan = planRevert(input());
    expect(plan.branch).toBe('rollgate/revert/staging/shop/web/h2');
    expect(revertBranch('staging', { namespace: 'shop', name: 'web' }, 'h3')).not.toBe(plan.branch);
    const open = plan.actions.find((action) => action.kind === 'openPullRequest');
    expect(open).toMatchObject({ head: plan.branch, title: 'Revert web revision h2 (aborted in staging)' });
    const body = open?.kind === 'openPullRequest' ? open.body : '';
    expect(body).toContain('metric "errors" assessed Failed');
    expect(body).toContain('This reverts commit c2c2c2c2c2');
    expect(body).toContain('ConfigMap `shop/web-config`');
    expect(body).toContain('never merges this pull request by itself');
  });

  it('a restore-rollout edit keeps every other byte of the file (comment, flow map)', () => {
    const plan = planRevert(
      input({
        commit: {
          sha: 'c2c2c2c2c2',
          parent: 'c1',
          subject: 's',
          changes: [
            { path: 'envs/staging/web.yaml', before: OLD, after: NEW },
            { path: 'ci/pipeline.yaml', before: 'a: 1\n', after: 'a: 2\n' },
          ],
        },
      }),
    );
    const [file] = pushed(plan);
    expect(file?.text).toBe(OLD);
    expect(file?.text).toContain('# the web server');
  });
});

describe('restoredObjects', () => {
  const source = { name: 'staging', path: 'envs/staging', namespace: 'shop' };
  const commitOf = (changes: Array<{ path: string; before?: string; after?: string }>) => ({
    source,
    commit: { sha: 'c2', parent: 'c1', subject: 's', changes },
  });
  const rows: Array<{
    name: string;
    changes: Array<{ path: string; before?: string; after?: string }>;
    want: string[];
  }> = [
    {
      name: 'a changed ConfigMap comes back',
      changes: [{ path: 'envs/staging/c.yaml', before: OLD_CONFIG, after: NEW_CONFIG }],
      want: ['ConfigMap/shop/web-config'],
    },
    {
      name: 'a changed Secret comes back',
      changes: [{ path: 'envs/staging/s.yaml', before: secretFile('a'), after: secretFile('b') }],
      want: ['Secret/shop/web-secret'],
    },
    {
      name: 'only reformatted (same content): nothing',
      changes: [{ path: 'envs/staging/c.yaml', before: OLD_CONFIG, after: `# comment\n${OLD_CONFIG}` }],
      want: [],
    },
    {
      name: 'added by the commit: left (no previous content)',
      changes: [{ path: 'envs/staging/c.yaml', after: NEW_CONFIG }],
      want: [],
    },
    {
      name: 'removed by the commit: applied again',
      changes: [{ path: 'envs/staging/c.yaml', before: OLD_CONFIG }],
      want: ['ConfigMap/shop/web-config'],
    },
    {
      name: "another source's path: not this source's object",
      changes: [{ path: 'envs/prod/c.yaml', before: OLD_CONFIG, after: NEW_CONFIG }],
      want: [],
    },
    {
      name: 'a Service changed beside: not restored (only configuration)',
      changes: [
        {
          path: 'envs/staging/svc.yaml',
          before: 'apiVersion: v1\nkind: Service\nmetadata: { name: a }\nspec: { ports: [{ port: 80 }] }\n',
          after: 'apiVersion: v1\nkind: Service\nmetadata: { name: a }\nspec: { ports: [{ port: 81 }] }\n',
        },
      ],
      want: [],
    },
    {
      name: 'a ConfigMap with its own namespace, in a multi-document file with the Rollout',
      changes: [
        {
          path: 'envs/staging/all.yaml',
          before: `${OLD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: m, namespace: other }\ndata: { a: "1" }\n`,
          after: `${NEW}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: m, namespace: other }\ndata: { a: "2" }\n`,
        },
      ],
      want: ['ConfigMap/other/m'],
    },
  ];
  it.each(rows)('$name', ({ changes, want }) => {
    expect(restoredObjects(commitOf(changes)).map((o) => `${o.kind}/${o.namespace}/${o.name}`)).toEqual(want);
  });

  it("restores the parent's whole object, namespace filled in", () => {
    const [object] = restoredObjects(
      commitOf([{ path: 'envs/staging/c.yaml', before: OLD_CONFIG, after: NEW_CONFIG }]),
    );
    expect(object?.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web-config', namespace: 'shop' },
      data: { LOG_LEVEL: 'info' },
    });
    expect(object?.file).toBe('envs/staging/c.yaml');
  });
});
