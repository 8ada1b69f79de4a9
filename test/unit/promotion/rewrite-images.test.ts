// Promotion image rewrites: exact output bytes for hand-written fixtures, Argo's examples read in place,
// kustomize overlays, typed errors, and a seeded property test that only image values' bytes ever change.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ImageRewriteError } from '../../../src/promotion/image-rewrite-error.ts';
import type { ImageRewriteErrorCode } from '../../../src/promotion/image-rewrite-error.ts';
import { joinImage, splitImage } from '../../../src/promotion/image-reference.ts';
import { planImageEdits } from '../../../src/promotion/plan-image-edits.ts';
import { rewriteImages } from '../../../src/promotion/rewrite-images.ts';
import type {
  ImageChange,
  ImageUpdate,
  PromotionFile,
  PromotionTarget,
} from '../../../src/promotion/rewrite-images.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { thrownError } from '../../support/thrown-error.ts';
import { upstreamCorpus } from '../../support/upstream-corpus.ts';

// Argo's examples are the upstream corpus: without it (a clone alone) only the cases that read it skip.
const corpus = upstreamCorpus('argo-rollouts/examples', import.meta.filename);
const examples = corpus.folder;

function yamlFiles(directory: string): string[] {
  return readdirSync(directory)
    .sort()
    .flatMap((entry) => {
      const full = join(directory, entry);
      if (statSync(full).isDirectory()) return yamlFiles(full);
      return /\.ya?ml$/.test(entry) ? [relative(examples, full)] : [];
    });
}

const readExample = (file: string): PromotionFile => ({
  path: file,
  text: readFileSync(join(examples, file), 'utf8'),
});

/** Builds YAML text from lines (so indentation in fixtures is visible), joined by `eol`, with a final one. */
const lines = (...content: string[]): string => `${content.join('\n')}\n`;
const crlf = (text: string): string => text.replace(/\n/g, '\r\n');

const rollout = (target: Partial<PromotionTarget> = {}): PromotionTarget => ({
  kind: 'Rollout',
  name: 'web',
  ...target,
});

function codeOf(run: () => unknown): { code: ImageRewriteErrorCode; context: ImageRewriteError['context'] } {
  const error = thrownError(ImageRewriteError, run);
  return { code: error.code, context: error.context };
}

const WEB_ROLLOUT = lines(
  '# prod web',
  'apiVersion: argoproj.io/v1alpha1',
  'kind: Rollout',
  'metadata:',
  '  name: web',
  'spec:',
  '  template:',
  '    spec:',
  '      initContainers:',
  '      - name: migrate',
  '        image: ghcr.io/acme/web-migrate:1.0.0',
  '      containers:',
  '      - name: web',
  '        image: ghcr.io/acme/web:1.0.0 # bumped by Rollgate',
  '        ports: [{containerPort: 8080}]',
  '      - name: sidecar',
  "        image: 'ghcr.io/acme/proxy:2.1'",
);

describe('rewriteImages: Rollouts and Deployments', () => {
  const rows: Array<{
    name: string;
    text: string;
    target?: PromotionTarget;
    images: ImageUpdate[];
    want: string;
    changed: ImageChange[];
  }> = [
    {
      name: 'a container: only its image bytes change, the comment beside it stays',
      text: WEB_ROLLOUT,
      images: [{ container: 'web', image: 'ghcr.io/acme/web:1.1.0' }],
      want: WEB_ROLLOUT.replace('web:1.0.0 #', 'web:1.1.0 #'),
      changed: [{ container: 'web', from: 'ghcr.io/acme/web:1.0.0', to: 'ghcr.io/acme/web:1.1.0' }],
    },
    {
      name: 'an init container and a single-quoted image (stays single-quoted)',
      text: WEB_ROLLOUT,
      images: [
        { container: 'migrate', image: 'ghcr.io/acme/web-migrate:1.1.0' },
        { container: 'sidecar', image: 'ghcr.io/acme/proxy:2.2' },
      ],
      want: WEB_ROLLOUT.replace('web-migrate:1.0.0', 'web-migrate:1.1.0').replace(
        "'ghcr.io/acme/proxy:2.1'",
        "'ghcr.io/acme/proxy:2.2'",
      ),
      changed: [
        {
          container: 'migrate',
          from: 'ghcr.io/acme/web-migrate:1.0.0',
          to: 'ghcr.io/acme/web-migrate:1.1.0',
        },
        { container: 'sidecar', from: 'ghcr.io/acme/proxy:2.1', to: 'ghcr.io/acme/proxy:2.2' },
      ],
    },
    {
      name: 'a digest image into a double-quoted value',
      text: lines(
        'apiVersion: rollgate.dev/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: prod}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: web',
        '          image: "ghcr.io/acme/web:1.0.0"   # quoted',
      ),
      target: rollout({ namespace: 'prod' }),
      images: [{ container: 'web', image: `ghcr.io/acme/web@sha256:${'ab'.repeat(32)}` }],
      want: lines(
        'apiVersion: rollgate.dev/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: prod}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '        - name: web',
        `          image: "ghcr.io/acme/web@sha256:${'ab'.repeat(32)}"   # quoted`,
      ),
      changed: [
        {
          container: 'web',
          from: 'ghcr.io/acme/web:1.0.0',
          to: `ghcr.io/acme/web@sha256:${'ab'.repeat(32)}`,
        },
      ],
    },
    {
      name: 'flow-style sequences and maps',
      text: lines(
        'kind: Rollout',
        'apiVersion: argoproj.io/v1alpha1',
        'metadata: {name: web}',
        'spec: {template: {spec: {containers: [{name: web, image: web:1}, {name: log, image: "log:1"}]}}}',
      ),
      images: [
        { container: 'web', image: 'registry.local:5000/web:2' },
        { container: 'log', image: 'log:2' },
      ],
      want: lines(
        'kind: Rollout',
        'apiVersion: argoproj.io/v1alpha1',
        'metadata: {name: web}',
        'spec: {template: {spec: {containers: [{name: web, image: registry.local:5000/web:2}, {name: log, image: "log:2"}]}}}',
      ),
      changed: [
        { container: 'web', from: 'web:1', to: 'registry.local:5000/web:2' },
        { container: 'log', from: 'log:1', to: 'log:2' },
      ],
    },
    {
      name: 'CRLF line endings and no final newline',
      text: crlf(WEB_ROLLOUT).slice(0, -2),
      images: [{ container: 'sidecar', image: 'ghcr.io/acme/proxy:2.2' }],
      want: crlf(WEB_ROLLOUT).slice(0, -2).replace('proxy:2.1', 'proxy:2.2'),
      changed: [{ container: 'sidecar', from: 'ghcr.io/acme/proxy:2.1', to: 'ghcr.io/acme/proxy:2.2' }],
    },
    {
      name: 'several documents: only the Deployment named by kind and name changes',
      text: lines(
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata:',
        '  name: web',
        '---',
        '# the old one, kept while migrating',
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: web',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - name: web',
        '        image: web:1',
        '',
        '---',
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata:',
        '  name: web',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - name: web',
        '        image: web:1',
        '...',
      ),
      target: { kind: 'Deployment', name: 'web' },
      images: [{ container: 'web', image: 'web:2' }],
      want: lines(
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata:',
        '  name: web',
        '---',
        '# the old one, kept while migrating',
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata:',
        '  name: web',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - name: web',
        '        image: web:2',
        '',
        '---',
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata:',
        '  name: web',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - name: web',
        '        image: web:1',
        '...',
      ),
      changed: [{ container: 'web', from: 'web:1', to: 'web:2' }],
    },
    {
      name: 'the namespace picks one of two Rollouts of the same name',
      text: lines(
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: staging}',
        'spec: {template: {spec: {containers: [{name: web, image: web:1}]}}}',
        '---',
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: prod}',
        'spec: {template: {spec: {containers: [{name: web, image: web:1}]}}}',
      ),
      target: rollout({ namespace: 'prod' }),
      images: [{ container: 'web', image: 'web:2' }],
      want: lines(
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: staging}',
        'spec: {template: {spec: {containers: [{name: web, image: web:1}]}}}',
        '---',
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web, namespace: prod}',
        'spec: {template: {spec: {containers: [{name: web, image: web:2}]}}}',
      ),
      changed: [{ container: 'web', from: 'web:1', to: 'web:2' }],
    },
    {
      name: 'an image already there: nothing changes',
      text: WEB_ROLLOUT,
      images: [{ container: 'web', image: 'ghcr.io/acme/web:1.0.0' }],
      want: WEB_ROLLOUT,
      changed: [],
    },
    {
      name: 'an image that would not read back as plain text is double-quoted',
      text: lines(
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - {name: web, image: web}',
      ),
      target: { kind: 'Deployment', name: 'web' },
      images: [{ container: 'web', image: '1.10' }],
      want: lines(
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - {name: web, image: "1.10"}',
      ),
      changed: [{ container: 'web', from: 'web', to: '1.10' }],
    },
  ];

  it.each(rows)('$name', ({ text, target, images, want, changed }) => {
    const result = rewriteImages({ path: 'envs/prod/web.yaml', text }, target ?? rollout(), images);
    expect(result.text).toBe(want);
    expect(result.changed).toEqual(changed);
  });
});

describe('rewriteImages: errors', () => {
  const rows: Array<{
    name: string;
    text: string;
    target?: PromotionTarget;
    images?: ImageUpdate[];
    code: ImageRewriteErrorCode;
    context?: Partial<ImageRewriteError['context']>;
  }> = [
    {
      name: 'no such Rollout',
      text: WEB_ROLLOUT,
      target: rollout({ name: 'api' }),
      code: 'promotion.target_not_found',
      context: { target: 'Rollout/api' },
    },
    {
      name: 'a Rollout in another namespace',
      text: WEB_ROLLOUT.replace('  name: web', '  name: web\n  namespace: staging'),
      target: rollout({ namespace: 'prod' }),
      code: 'promotion.target_not_found',
    },
    {
      name: 'a kind with an apiVersion that is not a Rollout',
      text: WEB_ROLLOUT.replace('argoproj.io/v1alpha1', 'example.com/v1'),
      code: 'promotion.target_not_found',
    },
    {
      name: 'no such container',
      text: WEB_ROLLOUT,
      images: [{ container: 'api', image: 'api:2' }],
      code: 'promotion.container_not_found',
      context: { file: 'envs/prod/web.yaml', container: 'api', target: 'Rollout/web' },
    },
    {
      name: 'two Rollouts match',
      text: `${WEB_ROLLOUT}---\n${WEB_ROLLOUT}`,
      code: 'promotion.target_ambiguous',
      context: { line: 20 },
    },
    {
      name: 'the image is an alias',
      text: WEB_ROLLOUT.replace("'ghcr.io/acme/proxy:2.1'", '*web').replace(
        'image: ghcr.io/acme/web:1.0.0',
        'image: &web ghcr.io/acme/web:1.0.0',
      ),
      images: [{ container: 'sidecar', image: 'x:1' }],
      code: 'promotion.image_is_alias',
      context: { line: 17, field: 'spec.template.spec.containers[1].image', container: 'sidecar' },
    },
    {
      name: 'the image carries an anchor',
      text: WEB_ROLLOUT.replace('image: ghcr.io/acme/web:1.0.0', 'image: &web ghcr.io/acme/web:1.0.0'),
      code: 'promotion.image_is_alias',
      context: { line: 14 },
    },
    {
      name: 'the container is an alias of another document',
      text: lines(
        'kind: Rollout',
        'apiVersion: argoproj.io/v1alpha1',
        'metadata: {name: web}',
        'x-base: &web {name: web, image: web:1}',
        'spec: {template: {spec: {containers: [*web]}}}',
      ),
      code: 'promotion.image_is_alias',
    },
    {
      name: 'the image comes from a merge key',
      text: lines(
        'kind: Rollout',
        'apiVersion: argoproj.io/v1alpha1',
        'metadata: {name: web}',
        'x-base: &base {image: web:1}',
        'spec:',
        '  template:',
        '    spec:',
        '      containers:',
        '      - name: web',
        '        <<: *base',
      ),
      code: 'promotion.image_is_alias',
    },
    {
      name: 'a block scalar image',
      text: WEB_ROLLOUT.replace(
        'image: ghcr.io/acme/web:1.0.0 # bumped by Rollgate',
        'image: >-\n          ghcr.io/acme/web:1.0.0',
      ),
      code: 'promotion.unsupported_yaml',
    },
    {
      name: 'a container without an image',
      text: WEB_ROLLOUT.replace('image: ghcr.io/acme/web:1.0.0 # bumped by Rollgate', 'image:'),
      code: 'promotion.image_missing',
    },
    {
      name: 'invalid YAML',
      text: `${WEB_ROLLOUT}  bad: [\n`,
      code: 'promotion.invalid_yaml',
      context: { file: 'envs/prod/web.yaml' },
    },
    {
      name: 'an image with a space',
      text: WEB_ROLLOUT,
      images: [{ container: 'web', image: 'web:1 # no' }],
      code: 'promotion.invalid_image',
    },
    {
      name: 'a Rollout whose workloadRef names a Deployment not in the file',
      text: lines(
        'apiVersion: argoproj.io/v1alpha1',
        'kind: Rollout',
        'metadata: {name: web}',
        'spec:',
        '  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web-template}',
      ),
      code: 'promotion.target_not_found',
      context: { target: 'Deployment/web-template' },
    },
  ];

  it.each(rows)('$name', ({ text, target, images, code, context }) => {
    const error = codeOf(() =>
      rewriteImages(
        { path: 'envs/prod/web.yaml', text },
        target ?? rollout(),
        images ?? [{ container: 'web', image: 'ghcr.io/acme/web:1.1.0' }],
      ),
    );
    expect(error.code).toBe(code);
    if (context) expect(error.context).toMatchObject(context);
  });

  it('names the file and line in the message', () => {
    expect(() =>
      rewriteImages({ path: 'envs/prod/web.yaml', text: WEB_ROLLOUT }, rollout(), [
        { container: 'api', image: 'api:2' },
      ]),
    ).toThrow(/^envs\/prod\/web\.yaml:2 spec\.template\.spec\.containers: no container named "api"/);
  });
});

const KUSTOMIZATION = lines(
  'apiVersion: kustomize.config.k8s.io/v1beta1',
  'kind: Kustomization',
  'resources:',
  '  - ../../base',
  '# pinned by promotion',
  'images:',
  '  - name: ghcr.io/acme/web',
  '    newTag: "1.0.0" # prod',
  '  - name: ghcr.io/acme/proxy',
  '    digest: sha256:' + 'cd'.repeat(32),
  '    newName: registry.local/proxy',
  'namePrefix: prod-',
);

describe('rewriteImages: kustomizations', () => {
  const digest = `sha256:${'ef'.repeat(32)}`;
  const rows: Array<{ name: string; path?: string; text: string; images: ImageUpdate[]; want: string }> = [
    {
      name: 'an entry with newTag gets the new tag (quotes and comment kept)',
      text: KUSTOMIZATION,
      images: [{ container: 'web', image: 'ghcr.io/acme/web:1.1.0' }],
      want: KUSTOMIZATION.replace('newTag: "1.0.0"', 'newTag: "1.1.0"'),
    },
    {
      name: 'a digest image: digest added after the entry, the stale newTag removed',
      text: KUSTOMIZATION,
      images: [{ container: 'web', image: `ghcr.io/acme/web@${digest}` }],
      want: KUSTOMIZATION.replace('    newTag: "1.0.0" # prod\n', `    digest: ${digest}\n`),
    },
    {
      name: 'a tag for an entry with a digest: the digest goes (it would win), the tag comes',
      text: KUSTOMIZATION,
      images: [{ container: 'proxy', image: 'registry.local/proxy:2.0' }],
      want: KUSTOMIZATION.replace(
        `    digest: sha256:${'cd'.repeat(32)}\n    newName: registry.local/proxy\n`,
        '    newName: registry.local/proxy\n    newTag: "2.0"\n',
      ),
    },
    {
      name: 'another repository sets newName',
      text: KUSTOMIZATION,
      images: [
        { container: 'web', image: 'ghcr.io/acme/web:1.1.0' },
        { container: 'proxy', image: 'ghcr.io/acme/proxy:3' },
      ],
      want: KUSTOMIZATION.replace('newTag: "1.0.0"', 'newTag: "1.1.0"')
        .replace(`    digest: sha256:${'cd'.repeat(32)}\n`, '')
        .replace('newName: registry.local/proxy', 'newName: ghcr.io/acme/proxy\n    newTag: "3"'),
    },
    {
      name: 'a missing entry is appended in the list style of the file',
      text: KUSTOMIZATION,
      images: [{ container: 'api', image: 'ghcr.io/acme/api:7.1' }],
      want: KUSTOMIZATION.replace(
        '    newName: registry.local/proxy\n',
        '    newName: registry.local/proxy\n  - name: ghcr.io/acme/api\n    newTag: "7.1"\n',
      ),
    },
    {
      name: 'no images list: one is added, indented like the resources list',
      path: 'envs/prod/kustomization.yml',
      text: lines('resources:', '  - ../../base', '', 'namePrefix: prod-  # keep'),
      images: [{ container: 'web', image: 'ghcr.io/acme/web:v2' }],
      want: lines(
        'resources:',
        '  - ../../base',
        '',
        'namePrefix: prod-  # keep',
        'images:',
        '  - name: ghcr.io/acme/web',
        '    newTag: v2',
      ),
    },
    {
      name: 'CRLF, no final newline, no images list',
      text: crlf('kind: Kustomization\nresources:\n- ../../base'),
      images: [{ container: 'web', image: 'ghcr.io/acme/web:v2' }],
      want: crlf(
        'kind: Kustomization\nresources:\n- ../../base\nimages:\n- name: ghcr.io/acme/web\n  newTag: v2',
      ),
    },
    {
      name: 'flow-style images list',
      text: lines('resources: [../../base]', 'images: [{name: ghcr.io/acme/web, newTag: v1}]'),
      images: [
        { container: 'web', image: 'ghcr.io/acme/web:v2' },
        { container: 'api', image: 'ghcr.io/acme/api:v3' },
      ],
      want: lines(
        'resources: [../../base]',
        'images: [{name: ghcr.io/acme/web, newTag: v2}, {name: ghcr.io/acme/api, newTag: v3}]',
      ),
    },
    {
      name: 'an empty images key',
      text: lines('resources:', '- ../../base', 'images:', 'namePrefix: prod-'),
      images: [{ container: 'web', image: 'ghcr.io/acme/web:v2' }],
      want: lines(
        'resources:',
        '- ../../base',
        'images:',
        '- name: ghcr.io/acme/web',
        '  newTag: v2',
        'namePrefix: prod-',
      ),
    },
    {
      name: 'a stale digest written first in its entry makes way for the next key',
      text: lines(
        `images:`,
        `- digest: sha256:${'cd'.repeat(32)}`,
        '  name: web',
        '- {name: api, digest: "sha256:' + 'cd'.repeat(32) + '"}',
      ),
      images: [
        { container: 'web', image: 'web:2' },
        { container: 'api', image: 'api:3' },
      ],
      want: lines('images:', '- name: web', '  newTag: "2"', '- {name: api, newTag: "3"}'),
    },
    {
      name: 'an empty newTag gets a value',
      text: lines('images:', '- name: web', '  newTag:', '- name: api', '  newTag: ~ # unset'),
      images: [
        { container: 'web', image: 'web:v2' },
        { container: 'api', image: 'api:v3' },
      ],
      want: lines('images:', '- name: web', '  newTag: v2', '- name: api', '  newTag: v3 # unset'),
    },
    {
      name: 'an image without tag means latest',
      text: KUSTOMIZATION,
      images: [{ container: 'web', image: 'ghcr.io/acme/web' }],
      want: KUSTOMIZATION.replace('newTag: "1.0.0"', 'newTag: "latest"'),
    },
  ];

  it.each(rows)('$name', ({ path, text, images, want }) => {
    const result = rewriteImages({ path: path ?? 'envs/prod/kustomization.yaml', text }, rollout(), images);
    expect(result.text).toBe(want);
  });

  it.skipIf(corpus.missing)("adds an entry to Argo's notifications kustomization, read in place", () => {
    const file = readExample('notifications/kustomization.yaml');
    const result = rewriteImages(file, rollout(), [
      { container: 'web', image: 'argoproj/rollouts-demo:yellow' },
    ]);
    expect(result.text).toBe(`${file.text}images:\n- name: argoproj/rollouts-demo\n  newTag: yellow\n`);
    expect(result.changed).toEqual([
      { container: 'web', from: 'argoproj/rollouts-demo', to: 'argoproj/rollouts-demo:yellow' },
    ]);
  });

  it('refuses two entries of one name, and an aliased entry', () => {
    const twice = `${KUSTOMIZATION}---\n`.replace(
      'images:\n',
      'images:\n  - name: ghcr.io/acme/web\n    newTag: "0.9"\n',
    );
    expect(
      codeOf(() =>
        rewriteImages({ path: 'kustomization.yaml', text: twice }, rollout(), [
          { container: 'web', image: 'ghcr.io/acme/web:2' },
        ]),
      ).code,
    ).toBe('promotion.target_ambiguous');
    const aliased = lines('x: &tag "1.0"', 'images:', '- name: ghcr.io/acme/web', '  newTag: *tag');
    expect(
      codeOf(() =>
        rewriteImages({ path: 'kustomization.yaml', text: aliased }, rollout(), [
          { container: 'web', image: 'ghcr.io/acme/web:2' },
        ]),
      ).code,
    ).toBe('promotion.image_is_alias');
  });
});

/** A file as a map path → text (test shorthand). */
const tree = (files: Record<string, string>): PromotionFile[] =>
  Object.entries(files).map(([path, text]) => ({ path, text }));

const BASE_ROLLOUT = lines(
  'apiVersion: argoproj.io/v1alpha1',
  'kind: Rollout',
  'metadata:',
  '  name: web',
  'spec:',
  '  template:',
  '    spec:',
  '      containers:',
  '      - name: web',
  '        image: registry.local/base/web:0.1',
);

describe('planImageEdits: which files change', () => {
  const web2 = [{ container: 'web', image: 'ghcr.io/acme/web:2.0' }];
  const rows: Array<{
    name: string;
    files: Record<string, string>;
    path?: string;
    images?: ImageUpdate[];
    want: Record<string, string>;
  }> = [
    {
      name: 'overlay over a base outside the path: an entry named after the base image is added',
      files: {
        'base/rollout.yaml': BASE_ROLLOUT,
        'base/kustomization.yaml': lines('resources:', '- rollout.yaml'),
        'envs/prod/kustomization.yaml': lines('resources:', '- ../../base'),
      },
      path: 'envs/prod',
      want: {
        'envs/prod/kustomization.yaml': lines(
          'resources:',
          '- ../../base',
          'images:',
          '- name: registry.local/base/web',
          '  newName: ghcr.io/acme/web',
          '  newTag: "2.0"',
        ),
      },
    },
    {
      name: 'overlay whose base the caller did not read: the entry is named after the new image',
      files: { 'envs/prod/kustomization.yaml': lines('resources:', '- ../../base') },
      path: 'envs/prod',
      want: {
        'envs/prod/kustomization.yaml': lines(
          'resources:',
          '- ../../base',
          'images:',
          '- name: ghcr.io/acme/web',
          '  newTag: "2.0"',
        ),
      },
    },
    {
      name: 'a Rollout file in the path, listed by a kustomization without images: the Rollout is edited',
      files: {
        'envs/prod/rollout.yaml': BASE_ROLLOUT,
        'envs/prod/kustomization.yaml': lines('resources:', '- rollout.yaml'),
      },
      path: 'envs/prod',
      want: {
        'envs/prod/rollout.yaml': BASE_ROLLOUT.replace('registry.local/base/web:0.1', 'ghcr.io/acme/web:2.0'),
      },
    },
    {
      name: 'a Rollout file in the path whose image a kustomization entry sets: the entry is edited',
      files: {
        'envs/prod/rollout.yaml': BASE_ROLLOUT,
        'envs/prod/kustomization.yaml': lines(
          'resources: [rollout.yaml]',
          'images:',
          '- name: registry.local/base/web',
          '  newName: ghcr.io/acme/web',
          '  newTag: "1.0"',
        ),
      },
      path: 'envs/prod',
      want: {
        'envs/prod/kustomization.yaml': lines(
          'resources: [rollout.yaml]',
          'images:',
          '- name: registry.local/base/web',
          '  newName: ghcr.io/acme/web',
          '  newTag: "2.0"',
        ),
      },
    },
    {
      name: 'nested overlays in the path with entries at both levels: the outermost is edited',
      files: {
        'base/rollout.yaml': BASE_ROLLOUT,
        'envs/prod/common/kustomization.yaml': lines(
          'resources: [../../../base/rollout.yaml]',
          'images: [{name: registry.local/base/web, newTag: "0.5"}]',
        ),
        'envs/prod/kustomization.yaml': lines(
          'resources: [common]',
          'images: [{name: registry.local/base/web, newTag: "1.0"}]',
        ),
      },
      path: 'envs/prod',
      want: {
        'envs/prod/kustomization.yaml': lines(
          'resources: [common]',
          'images: [{name: registry.local/base/web, newTag: "2.0", newName: ghcr.io/acme/web}]',
        ),
      },
    },
    {
      name: 'a Rollout with a workloadRef: the referenced Deployment in the path is edited',
      files: {
        'envs/prod/rollout.yaml': lines(
          'apiVersion: argoproj.io/v1alpha1',
          'kind: Rollout',
          'metadata: {name: web}',
          'spec: {workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web-template}}',
        ),
        'envs/prod/deployment.yaml': BASE_ROLLOUT.replace('argoproj.io/v1alpha1', 'apps/v1')
          .replace('kind: Rollout', 'kind: Deployment')
          .replace('name: web\nspec', 'name: web-template\nspec'),
      },
      want: {
        'envs/prod/deployment.yaml': BASE_ROLLOUT.replace('argoproj.io/v1alpha1', 'apps/v1')
          .replace('kind: Rollout', 'kind: Deployment')
          .replace('name: web\nspec', 'name: web-template\nspec')
          .replace('registry.local/base/web:0.1', 'ghcr.io/acme/web:2.0'),
      },
    },
    {
      name: 'an overlay with a patch naming the Rollout: the patch is not the workload, the kustomization is edited',
      files: {
        'envs/prod/kustomization.yaml': lines(
          'resources: [../../base]',
          'images: [{name: ghcr.io/acme/web, newTag: "1.0"}]',
          'patches: [{path: replicas.yaml}]',
        ),
        'envs/prod/replicas.yaml': lines(
          'apiVersion: argoproj.io/v1alpha1',
          'kind: Rollout',
          'metadata: {name: web}',
          'spec: {replicas: 3}',
        ),
      },
      path: 'envs/prod',
      want: {
        'envs/prod/kustomization.yaml': lines(
          'resources: [../../base]',
          'images: [{name: ghcr.io/acme/web, newTag: "2.0"}]',
          'patches: [{path: replicas.yaml}]',
        ),
      },
    },
    {
      name: 'images already promoted: no file changes',
      files: { 'envs/prod/rollout.yaml': BASE_ROLLOUT },
      images: [{ container: 'web', image: 'registry.local/base/web:0.1' }],
      want: {},
    },
  ];

  it.each(rows)('$name', ({ files, path, images, want }) => {
    const plan = planImageEdits(tree(files), rollout(), images ?? web2, path === undefined ? {} : { path });
    expect(Object.fromEntries(plan.files.map((file) => [file.path, file.text]))).toEqual(want);
    for (const file of plan.files) expect(file.changed.length).toBeGreaterThan(0);
  });

  it('errors: nothing to edit, two overlays, a container the base lacks', () => {
    expect(
      codeOf(() => planImageEdits(tree({ 'envs/prod/svc.yaml': 'kind: Service\n' }), rollout(), web2)).code,
    ).toBe('promotion.target_not_found');
    const twoOverlays = tree({
      'base/rollout.yaml': BASE_ROLLOUT,
      'envs/prod/eu/kustomization.yaml': lines('resources: [../../../base/rollout.yaml]'),
      'envs/prod/us/kustomization.yaml': lines('resources: [../../../base/rollout.yaml]'),
    });
    expect(codeOf(() => planImageEdits(twoOverlays, rollout(), web2, { path: 'envs/prod' })).code).toBe(
      'promotion.target_ambiguous',
    );
    const overlay = tree({
      'base/rollout.yaml': BASE_ROLLOUT,
      'envs/prod/kustomization.yaml': lines('resources: [../../base/rollout.yaml]'),
    });
    const error = codeOf(() =>
      planImageEdits(overlay, rollout(), [{ container: 'api', image: 'api:1' }], { path: 'envs/prod' }),
    );
    expect(error).toMatchObject({
      code: 'promotion.container_not_found',
      context: { file: 'base/rollout.yaml', container: 'api' },
    });
  });

  it('never edits a base outside the path, even when it holds the Rollout', () => {
    const files = tree({
      'base/rollout.yaml': BASE_ROLLOUT,
      'envs/prod/kustomization.yaml': lines('resources:', '- ../../base/rollout.yaml'),
    });
    const plan = planImageEdits(files, rollout(), web2, { path: 'envs/prod/' });
    expect(plan.files.map((file) => file.path)).toEqual(['envs/prod/kustomization.yaml']);
  });
});

/** Images of the Rollouts/Deployments of Argo's examples: [file, target, containers]. */
function corpusTargets(): Array<{
  file: PromotionFile;
  target: PromotionTarget;
  containers: Map<string, string>;
}> {
  const found: Array<{ file: PromotionFile; target: PromotionTarget; containers: Map<string, string> }> = [];
  for (const path of yamlFiles(examples)) {
    const file = readExample(path);
    const documents = parseAllDocuments(file.text, { logLevel: 'error' }).map(
      (d) => d.toJS() as Record<string, unknown> | null,
    );
    const names = new Map<string, number>();
    for (const document of documents) {
      const kind = document?.kind;
      if (kind !== 'Rollout' && kind !== 'Deployment') continue;
      const name = (document?.metadata as { name?: string } | undefined)?.name ?? '';
      names.set(`${kind}/${name}`, (names.get(`${kind}/${name}`) ?? 0) + 1);
    }
    for (const document of documents) {
      const kind = document?.kind;
      if (kind !== 'Rollout' && kind !== 'Deployment') continue;
      const name = (document?.metadata as { name?: string } | undefined)?.name ?? '';
      if (names.get(`${kind}/${name}`) !== 1) continue;
      const spec = (document?.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template
        ?.spec;
      const containers = new Map<string, string>();
      for (const key of ['initContainers', 'containers']) {
        for (const container of (spec?.[key] as Array<{ name: string; image: string }> | undefined) ?? []) {
          containers.set(container.name, container.image);
        }
      }
      if (containers.size > 0) found.push({ file, target: { kind, name }, containers });
    }
  }
  return found;
}

/** A character that cannot be part of an unquoted image token. */
const isTokenBreak = (char: string | undefined): boolean => char === undefined || /[\s'",{}[\]]/.test(char);

/**
 * Checks, without the implementation's own YAML ranges, that `after` differs from `before` only inside
 * image values: same lines (same line endings), and every differing line is the same line with one image
 * token (and nothing around it) replaced by the new image, each change accounting for one line.
 */
function expectOnlyImagesChanged(before: string, after: string, changed: ImageChange[]): void {
  const old = before.split('\n');
  const now = after.split('\n');
  expect(now.length).toBe(old.length);
  const pending = [...changed];
  old.forEach((line, index) => {
    const next = now[index] ?? '';
    if (line === next) return;
    let prefix = 0;
    while (prefix < line.length && line[prefix] === next[prefix]) prefix += 1;
    while (prefix > 0 && !isTokenBreak(line[prefix - 1])) prefix -= 1;
    const change = pending.find((c) => line.startsWith(c.from, prefix) && next.startsWith(c.to, prefix));
    expect(change, `line ${index + 1}: ${JSON.stringify(line)} → ${JSON.stringify(next)}`).toBeDefined();
    if (!change) return;
    expect(isTokenBreak(line[prefix + change.from.length])).toBe(true);
    expect(next.slice(prefix + change.to.length)).toBe(line.slice(prefix + change.from.length));
    pending.splice(pending.indexOf(change), 1);
  });
  expect(pending).toEqual([]);
}

function randomImage(random: SeededRandom, current: string): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random.next() * items.length)] as T;
  if (random.chance(0.15)) return current;
  const reference = splitImage(current);
  const repository = random.chance(0.2)
    ? pick(['ghcr.io/acme/web', 'registry.local:5000/team/app', 'docker.io/library/nginx', 'quay.io/x'])
    : reference.repository;
  const hex = Array.from({ length: 64 }, () => Math.floor(random.next() * 16).toString(16)).join('');
  const tag = pick(['v2', '1.10', '2024-06-01', 'sha-9f8e7d', 'yellow', 'latest', '3']);
  switch (pick(['tag', 'tag', 'digest', 'both'] as const)) {
    case 'tag':
      return joinImage({ repository, tag });
    case 'digest':
      return joinImage({ repository, digest: `sha256:${hex}` });
    case 'both':
      return joinImage({ repository, tag, digest: `sha256:${hex}` });
  }
}

describe.skipIf(corpus.missing)("Argo's examples, read in place", () => {
  const targets = corpus.missing ? [] : corpusTargets();

  it('finds Rollouts and Deployments with containers in the corpus', () => {
    expect(targets.length).toBeGreaterThanOrEqual(15);
  });

  it.each(targets.map((t) => ({ ...t, label: `${t.file.path} ${t.target.kind}/${t.target.name}` })))(
    'every container of $label',
    ({ file, target, containers }) => {
      const images = [...containers.keys()].map((container) => ({
        container,
        image: `ghcr.io/acme/${container}:promoted`,
      }));
      const result = rewriteImages(file, target, images);
      expectOnlyImagesChanged(file.text, result.text, result.changed);
      expect(result.changed).toHaveLength(images.length);
    },
  );

  it('property: random images into random files (quoted, CRLF, no final newline) change only image values', () => {
    const random = new SeededRandom(20240613);
    let changes = 0;
    for (let trial = 0; trial < 400; trial += 1) {
      const { file, target, containers } = targets[
        Math.floor(random.next() * targets.length)
      ] as (typeof targets)[number];
      let text = file.text;
      if (random.chance(0.3)) {
        const quote = random.chance(0.5) ? "'" : '"';
        text = text.replace(/(image: +)([^\s'"#]+)/g, `$1${quote}$2${quote}`);
      }
      if (random.chance(0.3)) text = crlf(text);
      if (random.chance(0.3)) text = text.replace(/\r?\n$/, '');
      const names = [...containers.keys()].filter(() => random.chance(0.7));
      const images = names.map((container) => ({
        container,
        image: randomImage(random, containers.get(container) ?? ''),
      }));
      const result = rewriteImages({ path: file.path, text }, target, images);
      const moved = images.filter(({ container, image }) => containers.get(container) !== image);
      expect(result.changed.map((c) => c.container).sort()).toEqual(moved.map((m) => m.container).sort());
      expectOnlyImagesChanged(text, result.text, result.changed);
      // Read back: the same data with only the images replaced.
      const want = parseAllDocuments(text, { logLevel: 'error' }).map((d) => d.toJS() as unknown);
      for (const document of want) {
        const object = document as {
          kind?: string;
          metadata?: { name?: string };
          spec?: { template?: { spec?: Record<string, Array<{ name: string; image: string }>> } };
        } | null;
        if (object?.kind !== target.kind || object.metadata?.name !== target.name) continue;
        for (const key of ['initContainers', 'containers']) {
          for (const container of object.spec?.template?.spec?.[key] ?? []) {
            const update = images.find((i) => i.container === container.name);
            if (update) container.image = update.image;
          }
        }
      }
      expect(parseAllDocuments(result.text, { logLevel: 'error' }).map((d) => d.toJS() as unknown)).toEqual(
        want,
      );
      changes += result.changed.length;
    }
    expect(changes).toBeGreaterThan(200);
  });
});
