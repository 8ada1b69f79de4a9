// Setting a Rollout's annotation in its manifest: exact output bytes per file shape, typed refusals, and a
// seeded property that the result reads as the input plus the one annotation.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ImageRewriteError } from '../../../src/promotion/image-rewrite-error.ts';
import { setRolloutAnnotation } from '../../../src/promotion/rollout-annotation.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';

const KEY = 'rollgate.dev/approve';
const VALUE = 'k2x9b4d/1';

interface Row {
  name: string;
  given: string;
  namespace?: string;
  want: string;
}

const rows: Row[] = [
  {
    name: 'replaces an existing value in its quoting style',
    given: `kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  annotations:
    rollgate.dev/approve: 'old/0'   # approved by alice
spec: {}
`,
    want: `kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  annotations:
    rollgate.dev/approve: 'k2x9b4d/1'   # approved by alice
spec: {}
`,
  },
  {
    name: 'adds to an annotations map, with its indentation',
    given: `kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
    name: web
    annotations:
          team: "payments"
          # owner: someone
spec: {}
`,
    want: `kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
    name: web
    annotations:
          team: "payments"
          rollgate.dev/approve: k2x9b4d/1
          # owner: someone
spec: {}
`,
  },
  {
    name: 'adds annotations under metadata, indented as the file is',
    given: `# the web tier
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
    name: web
    labels:
        app: web   # selector
spec:
    replicas: 2
`,
    want: `# the web tier
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
    name: web
    labels:
        app: web   # selector
    annotations:
        rollgate.dev/approve: k2x9b4d/1
spec:
    replicas: 2
`,
  },
  {
    name: 'edits only the matching document of several',
    namespace: 'prod',
    given: `apiVersion: v1
kind: Service
metadata:
  name: web
---
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  namespace: staging
---
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  namespace: prod
spec: {}
`,
    want: `apiVersion: v1
kind: Service
metadata:
  name: web
---
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  namespace: staging
---
kind: Rollout
apiVersion: argoproj.io/v1alpha1
metadata:
  name: web
  namespace: prod
  annotations:
    rollgate.dev/approve: k2x9b4d/1
spec: {}
`,
  },
  {
    name: 'keeps CRLF line endings',
    given: 'kind: Rollout\r\napiVersion: argoproj.io/v1alpha1\r\nmetadata:\r\n  name: web\r\nspec: {}\r\n',
    want: 'kind: Rollout\r\napiVersion: argoproj.io/v1alpha1\r\nmetadata:\r\n  name: web\r\n  annotations:\r\n    rollgate.dev/approve: k2x9b4d/1\r\nspec: {}\r\n',
  },
  {
    name: 'keeps a missing final newline',
    given: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web',
    want: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\n    rollgate.dev/approve: k2x9b4d/1',
  },
  {
    name: 'fills an empty annotations key',
    given:
      'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\nspec: {}\n',
    want: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\n    rollgate.dev/approve: k2x9b4d/1\nspec: {}\n',
  },
  {
    name: 'adds to a flow annotations map',
    given:
      'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations: { a: b }\n',
    want: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations: { a: b, rollgate.dev/approve: k2x9b4d/1 }\n',
  },
  {
    name: 'leaves a file that already has the value as it is',
    given:
      'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\n    rollgate.dev/approve: "k2x9b4d/1"\n',
    want: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\n    rollgate.dev/approve: "k2x9b4d/1"\n',
  },
];

describe('setRolloutAnnotation', () => {
  it.each(rows)('$name', ({ given, namespace, want }) => {
    const rollout = namespace === undefined ? { name: 'web' } : { name: 'web', namespace };
    expect(setRolloutAnnotation(given, rollout, KEY, VALUE)).toBe(want);
  });

  it.each([
    {
      name: 'flow-style metadata',
      given: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata: { name: web }\n',
      code: 'promotion.unsupported_yaml',
    },
    {
      name: 'no such Rollout',
      given: 'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: api\n',
      code: 'promotion.target_not_found',
    },
    {
      name: 'two Rollouts of that name',
      given:
        'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n---\nkind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n',
      code: 'promotion.target_ambiguous',
    },
    {
      name: 'annotations from an alias',
      given:
        'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations: &own { a: b }\n',
      code: 'promotion.unsupported_yaml',
    },
    {
      name: 'a block scalar value',
      given:
        'kind: Rollout\napiVersion: argoproj.io/v1alpha1\nmetadata:\n  name: web\n  annotations:\n    rollgate.dev/approve: |\n      old/0\n',
      code: 'promotion.unsupported_yaml',
    },
    {
      name: 'invalid YAML',
      given: 'kind: Rollout\nmetadata: [\n',
      code: 'promotion.invalid_yaml',
    },
  ])('refuses $name ($code)', ({ given, code }) => {
    let thrown: unknown;
    try {
      setRolloutAnnotation(given, { name: 'web' }, KEY, VALUE, { path: 'envs/web.yaml' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ImageRewriteError);
    expect((thrown as ImageRewriteError).code).toBe(code);
    expect((thrown as ImageRewriteError).message).toContain('envs/web.yaml');
  });

  it('reads back as the input plus the one annotation (seeded shapes)', () => {
    const random = new SeededRandom(13);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random.next() * items.length)] as T;
    for (let round = 0; round < 120; round += 1) {
      const indent = pick([2, 4]);
      const eol = pick(['\n', '\r\n']);
      const p = (depth: number): string => ' '.repeat(indent * depth);
      const annotations = pick([
        [],
        [`${p(1)}annotations:`, `${p(2)}team: payments # who`],
        [`${p(1)}annotations:`, `${p(2)}'${KEY}': "old/${round}"`],
        [`${p(1)}annotations: {team: x}`],
        [`${p(1)}annotations:`],
      ]);
      const labels = pick([[], [`${p(1)}labels:`, `${p(2)}app: web`]]);
      const metadata = random.chance(0.5)
        ? [...labels, ...annotations, `${p(1)}name: web`]
        : [`${p(1)}name: web`, ...annotations, ...labels];
      const rollout = [
        ...(random.chance(0.3) ? ['# leading comment'] : []),
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata:',
        ...metadata,
        ...(random.chance(0.5) ? ['spec:', `${p(1)}replicas: 2`] : []),
      ];
      const other = ['apiVersion: v1', 'kind: Service', 'metadata:', `${p(1)}name: web`];
      const documents = random.chance(0.5) ? [other, rollout] : [rollout];
      const given =
        documents.map((lines) => lines.join(eol)).join(`${eol}---${eol}`) + (random.chance(0.8) ? eol : '');
      const value = pick([VALUE, '123/4', 'yes/no', `abc${round}/0`]);

      const text = setRolloutAnnotation(given, { name: 'web' }, KEY, value);

      const before = parseAllDocuments(given).map((document) => document.toJS() as Record<string, unknown>);
      const after = parseAllDocuments(text).map((document) => document.toJS() as Record<string, unknown>);
      const expected = structuredClone(before);
      const target = expected[expected.length - 1] as { metadata: { annotations?: Record<string, string> } };
      target.metadata.annotations = { ...(target.metadata.annotations ?? {}), [KEY]: value };
      expect(after, given).toEqual(expected);
      expect(text.includes('\r\n'), given).toBe(eol === '\r\n');
      // Every line away from the annotations stays, byte for byte and in order.
      const kept = given.split(eol).filter((line) => !line.includes('annotations') && !line.includes(KEY));
      const lines = text.split(eol);
      let at = 0;
      for (const line of kept) {
        at = lines.indexOf(line, at);
        expect(at, `${JSON.stringify(line)} kept in\n${text}`).toBeGreaterThanOrEqual(0);
        at += 1;
      }
    }
  });
});
