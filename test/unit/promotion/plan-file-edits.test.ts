// The plan of a promotion's file moves: whole files and folders copied byte for byte, deletions, refusals.
import { describe, expect, it } from 'vitest';
import {
  planFileEdits,
  sourceRelativePath,
  type FileMove,
  type TreeFile,
} from '../../../src/promotion/plan-file-edits.ts';
import { FileMoveError } from '../../../src/promotion/file-move-error.ts';

// Bytes a rewrite would lose: CRLF, a comment, odd indentation, quoting, no final newline.
const STAGING_WEB =
  "# web's settings\r\napiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: web}\r\ndata:\r\n    LOG_LEVEL: 'debug'   # louder in staging\r\n    FEATURE_X: \"on\"";

interface Row {
  name: string;
  moves: FileMove[];
  from: TreeFile[];
  to: TreeFile[];
  want: { files: Array<{ path: string; text: string }>; deletions: string[]; edits: Array<[string, string]> };
}

const rows: Row[] = [
  {
    name: 'a whole file is copied byte for byte (CRLF, comments, quoting, no final newline)',
    moves: [{ from: 'config/web.yaml', to: 'config/web.yaml' }],
    from: [{ path: 'config/web.yaml', text: STAGING_WEB }],
    to: [
      {
        path: 'config/web.yaml',
        text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {LOG_LEVEL: info}\n',
      },
    ],
    want: {
      files: [{ path: 'envs/prod/config/web.yaml', text: STAGING_WEB }],
      deletions: [],
      edits: [['config/web.yaml', 'modified']],
    },
  },
  {
    name: 'a file already equal is left out',
    moves: [{ from: 'config/web.yaml', to: 'config/web.yaml' }],
    from: [{ path: 'config/web.yaml', text: STAGING_WEB }],
    to: [{ path: 'config/web.yaml', text: STAGING_WEB }],
    want: { files: [], deletions: [], edits: [] },
  },
  {
    name: 'a file moves to another name and is added',
    moves: [{ from: './staging-values.yaml', to: 'values//prod.yaml' }],
    from: [{ path: 'staging-values.yaml', text: 'replicas: 2\n' }],
    to: [],
    want: {
      files: [{ path: 'envs/prod/values/prod.yaml', text: 'replicas: 2\n' }],
      deletions: [],
      edits: [['values/prod.yaml', 'added']],
    },
  },
  {
    name: 'a file deleted in staging is deleted in the target',
    moves: [{ from: 'config/old.yaml', to: 'config/old.yaml' }],
    from: [],
    to: [{ path: 'config/old.yaml', text: 'kind: ConfigMap\n' }],
    want: { files: [], deletions: ['envs/prod/config/old.yaml'], edits: [['config/old.yaml', 'deleted']] },
  },
  {
    name: 'a file absent on both sides changes nothing',
    moves: [{ from: 'config/none.yaml', to: 'config/none.yaml' }],
    from: [],
    to: [{ path: 'config/other.yaml', text: 'x: 1\n' }],
    want: { files: [], deletions: [], edits: [] },
  },
  {
    name: 'a folder with nested files: added, modified, and what staging no longer has deleted; siblings untouched',
    moves: [{ from: 'config', to: 'settings/' }],
    from: [
      { path: 'config/a.yaml', text: 'a: 2\n' },
      { path: 'config/deep/er/b.properties', text: 'b=1\n' },
      { path: 'config/same.txt', text: 'same\n' },
      { path: 'configmaps.yaml', text: 'not in the folder\n' },
    ],
    to: [
      { path: 'settings/a.yaml', text: 'a: 1\n' },
      { path: 'settings/same.txt', text: 'same\n' },
      { path: 'settings/gone/c.yaml', text: 'c: 1\n' },
      { path: 'settings.yaml', text: 'a sibling, not in the folder\n' },
    ],
    want: {
      files: [
        { path: 'envs/prod/settings/a.yaml', text: 'a: 2\n' },
        { path: 'envs/prod/settings/deep/er/b.properties', text: 'b=1\n' },
      ],
      deletions: ['envs/prod/settings/gone/c.yaml'],
      edits: [
        ['settings/a.yaml', 'modified'],
        ['settings/deep/er/b.properties', 'added'],
        ['settings/gone/c.yaml', 'deleted'],
      ],
    },
  },
  {
    name: 'a folder deleted in staging is deleted whole in the target',
    moves: [{ from: 'config', to: 'config' }],
    from: [],
    to: [
      { path: 'config/a.yaml', text: 'a\n' },
      { path: 'config/x/b.yaml', text: 'b\n' },
    ],
    want: {
      files: [],
      deletions: ['envs/prod/config/a.yaml', 'envs/prod/config/x/b.yaml'],
      edits: [
        ['config/a.yaml', 'deleted'],
        ['config/x/b.yaml', 'deleted'],
      ],
    },
  },
];

describe('planFileEdits', () => {
  for (const row of rows)
    it(row.name, () => {
      const plan = planFileEdits({ moves: row.moves, from: row.from, to: row.to, toRoot: 'envs/prod/' });
      expect(plan.files).toEqual(row.want.files);
      expect(plan.deletions).toEqual(row.want.deletions);
      expect(plan.edits.map((edit) => [edit.path, edit.change])).toEqual(row.want.edits);
    });

  it('writes paths at the repository root when the target source has no path', () => {
    const plan = planFileEdits({
      moves: [{ from: 'a.yaml', to: 'a.yaml' }],
      from: [{ path: 'a.yaml', text: '1\n' }],
      to: [],
      toRoot: '.',
    });
    expect(plan.files).toEqual([{ path: 'a.yaml', text: '1\n' }]);
  });

  const refusals: Array<{ name: string; move: FileMove; code: string; message: RegExp }> = [
    {
      name: 'a from path climbing out',
      move: { from: '../prod/secret.yaml', to: 'a.yaml', key: 'promotions[0].files[0]' },
      code: 'promotion.path_outside_source',
      message: /^promotions\[0\]\.files\[0\]\.from: "\.\.\/prod\/secret\.yaml" leaves the source's path/,
    },
    {
      name: 'a to path climbing out after a folder',
      move: { from: 'a.yaml', to: 'config/../../b.yaml', key: 'promotions[1].files[2]' },
      code: 'promotion.path_outside_source',
      message: /^promotions\[1\]\.files\[2\]\.to: .*leaves the source's path/,
    },
    {
      name: 'an absolute path',
      move: { from: '/etc/passwd', to: 'a.yaml' },
      code: 'promotion.path_outside_source',
      message: /files\[0\]\.from: "\/etc\/passwd" is absolute/,
    },
    {
      name: "the source's path itself",
      move: { from: './', to: 'a' },
      code: 'promotion.path_outside_source',
      message: /names the source's path itself/,
    },
    {
      name: 'a .git folder',
      move: { from: 'a', to: 'x/.git/hooks' },
      code: 'promotion.path_outside_source',
      message: /\.git/,
    },
  ];
  for (const refusal of refusals)
    it(`refuses ${refusal.name} with a clear error`, () => {
      const attempt = (): unknown =>
        planFileEdits({
          moves: [refusal.move],
          from: [{ path: 'a.yaml', text: '' }],
          to: [],
          toRoot: 'envs/prod',
        });
      expect(attempt).toThrow(FileMoveError);
      expect(attempt).toThrow(refusal.message);
      try {
        attempt();
      } catch (error) {
        expect((error as FileMoveError).code).toBe(refusal.code);
      }
    });

  it('refuses a file in staging whose target is a folder, and two moves writing one path', () => {
    expect(() =>
      planFileEdits({
        moves: [{ from: 'a.yaml', to: 'config' }],
        from: [{ path: 'a.yaml', text: '' }],
        to: [{ path: 'config/x.yaml', text: '' }],
        toRoot: '',
      }),
    ).toThrow(/"a.yaml" is a file in the from source but "config" is a folder in the target/);
    expect(() =>
      planFileEdits({
        moves: [
          { from: 'a.yaml', to: 'c.yaml' },
          { from: 'b.yaml', to: 'c.yaml' },
        ],
        from: [
          { path: 'a.yaml', text: 'a' },
          { path: 'b.yaml', text: 'b' },
        ],
        to: [],
        toRoot: '',
      }),
    ).toThrow(/files\[1\]: "c.yaml" is also written by files\[0\]/);
  });

  it('normalizes what stays inside', () => {
    expect(sourceRelativePath('./config//a/../web.yaml')).toBe('config/web.yaml');
  });
});
