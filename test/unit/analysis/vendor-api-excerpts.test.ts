// The Wavefront, SkyWalking and Kayenta doubles' API excerpts agree with what each vendor publishes, read from fetched mirrors.
import { spawnSync } from 'node:child_process';
import { buildSchema, printType, type GraphQLNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { KAYENTA_CANARY_API } from '../../support/kayenta-double.ts';
import { SKYWALKING_SCHEMA_TEXT } from '../../support/skywalking-double.ts';
import { upstreamCheckout, type UpstreamCheckout } from '../../support/upstream-checkout.ts';
import { WAVEFRONT_QUERY_API } from '../../support/wavefront-double.ts';

const skips = (what: string) => `the test that checks the ${what} double's excerpt against its source`;
const wavefront = upstreamCheckout(
  {
    github: 'wavefrontHQ/python-client',
    repoEnv: 'ROLLGATE_WAVEFRONT_CLIENT_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_WAVEFRONT_CLIENT',
  },
  import.meta.filename,
  skips('Wavefront'),
);
const skywalking = upstreamCheckout(
  {
    github: 'apache/skywalking-query-protocol',
    repoEnv: 'ROLLGATE_SKYWALKING_PROTOCOL_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_SKYWALKING_PROTOCOL',
  },
  import.meta.filename,
  skips('SkyWalking'),
);
const kayenta = upstreamCheckout(
  {
    github: 'spinnaker/kayenta',
    repoEnv: 'ROLLGATE_KAYENTA_REPO',
    requireEnv: 'ROLLGATE_REQUIRE_KAYENTA',
  },
  import.meta.filename,
  skips('Kayenta'),
);

/** A file at the commit an excerpt names (which may be older than the checkout's HEAD). */
function showAt(checkout: UpstreamCheckout, commit: string, path: string): string {
  const run = spawnSync('git', ['-C', checkout.repo, 'show', `${commit}:${path}`], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`cannot read ${commit}:${path} from ${checkout.repo}: ${run.stderr}`);
  return run.stdout;
}

describe.skipIf(wavefront.missing)("the Wavefront excerpt and Wavefront's REST API description", () => {
  it('queryApi, its security scheme and its answer are cut unchanged from the description', () => {
    const { source } = WAVEFRONT_QUERY_API;
    const full = JSON.parse(showAt(wavefront, source.commit, source.path)) as typeof WAVEFRONT_QUERY_API;
    const path = '/api/v2/chart/api';
    const theirs = full.paths[path]?.get as unknown as Record<string, unknown>;
    const ours = WAVEFRONT_QUERY_API.paths[path]?.get as unknown as Record<string, unknown>;
    // The excerpt keeps the operation's machine-readable parts; its prose (summary, description, tags) is left out.
    expect(ours).toEqual(Object.fromEntries(Object.keys(ours).map((key) => [key, theirs[key]])));
    expect(Object.keys(ours).sort()).toEqual([
      'operationId',
      'parameters',
      'produces',
      'responses',
      'security',
    ]);
    expect(WAVEFRONT_QUERY_API.securityDefinitions).toEqual(full.securityDefinitions);
    expect(WAVEFRONT_QUERY_API.definitions['Timeseries']).toEqual(full.definitions['Timeseries']);
    // QueryResult as cut, plus the two fields the current description adds (see the excerpt's addendum).
    const { errorType, errorMessage, ...cut } =
      WAVEFRONT_QUERY_API.definitions['QueryResult']?.properties ?? {};
    expect(cut).toEqual(full.definitions['QueryResult']?.properties);
    const current = wavefront.show('docs/QueryResult.md');
    expect([errorType, errorMessage].every((f) => f !== undefined)).toBe(true);
    expect(current).toContain('**error_type** | **str**');
    expect(current).toContain('**error_message** | **str**');
  });

  it('the current client still documents the parameters the provider sends', () => {
    const api = wavefront.show('docs/QueryApi.md');
    expect(api).toContain('**GET** /api/v2/chart/api');
    for (const name of ['q', 's', 'e', 'g', 'p', 'i'])
      expect(api).toMatch(new RegExp(`^ \\*\\*${name}\\*\\* \\|`, 'm'));
  });
});

describe.skipIf(skywalking.missing)("the SkyWalking excerpt and SkyWalking's query protocol", () => {
  it('every type and query field of the excerpt is the protocol’s own', () => {
    const commit =
      /apache\/skywalking-query-protocol at ([0-9a-f]{40})/.exec(SKYWALKING_SCHEMA_TEXT)?.[1] ?? '';
    const files = spawnSync('git', ['-C', skywalking.repo, 'ls-tree', '--name-only', commit], {
      encoding: 'utf8',
    })
      .stdout.split('\n')
      .filter((f) => f.endsWith('.graphqls'));
    const protocol = buildSchema(files.map((f) => showAt(skywalking, commit, f)).join('\n'));
    const excerpt = buildSchema(SKYWALKING_SCHEMA_TEXT);
    const printed = (type: GraphQLNamedType | null | undefined) => (type ? printType(type) : 'missing');
    for (const type of Object.values(excerpt.getTypeMap())) {
      if (
        type.name.startsWith('__') ||
        type.name === 'Query' ||
        ['String', 'Boolean', 'Int', 'ID', 'Float'].includes(type.name)
      )
        continue;
      expect(printed(type), type.name).toBe(printed(protocol.getType(type.name)));
    }
    const queries = protocol.getQueryType()?.getFields() ?? {};
    for (const [name, field] of Object.entries(excerpt.getQueryType()?.getFields() ?? {})) {
      const theirs = queries[name];
      expect(theirs, name).toBeDefined();
      expect(String(field.type), name).toBe(String(theirs?.type));
      expect(
        field.args.map((a) => `${a.name}: ${String(a.type)}`),
        name,
      ).toEqual(theirs?.args.map((a) => `${a.name}: ${String(a.type)}`));
    }
  });
});

describe.skipIf(kayenta.missing)("the Kayenta excerpt and Kayenta's controllers and models", () => {
  const commit = KAYENTA_CANARY_API.source.commit;
  const java = (folder: string, file: string) =>
    showAt(kayenta, commit, `${folder}/${file}`).replace(/\/\/.*$/gm, '');

  it.each(Object.entries(KAYENTA_CANARY_API.operations))('%s: its route and query parameters', (name, op) => {
    const source = java(KAYENTA_CANARY_API.source.files.controllers, op.controller);
    const base = /@RequestMapping\("([^"]+)"\)\s*(?:@\w+\s*)*public class/.exec(source)?.[1];
    expect(op.path.startsWith(base ?? '?'), `${op.path} under ${base ?? '?'}`).toBe(true);
    const method = new RegExp(`public [\\w<>, ]+ ${name}\\(([\\s\\S]*?)\\)\\s*(?:throws [\\w, ]+)?\\{`).exec(
      source,
    )?.[1];
    expect(method, name).toBeDefined();
    const params = [
      ...(method ?? '').matchAll(/@RequestParam\(([^)]*)\)\s*(?:final\s+)?[\w<>]+\s+(\w+)/g),
    ].map((m) => /value = "(\w+)"/.exec(m[1] ?? '')?.[1] ?? m[2]);
    expect(params.filter((p) => !['limit', 'page', 'statuses'].includes(p ?? ''))).toEqual(op.query);
    const mapping =
      source
        .slice(0, source.indexOf(` ${name}(`))
        .split('@RequestMapping')
        .at(-1) ?? '';
    expect(mapping).toContain(`RequestMethod.${op.method}`);
    if (op.path !== base) expect(mapping).toMatch(/value = "\/\{\w+:\.\+\}"/);
  });

  it.each(Object.entries(KAYENTA_CANARY_API.definitions).filter(([, d]) => d.required !== undefined))(
    '%s: its required fields are the model’s @NotNull ones',
    (name, definition) => {
      const folder =
        KAYENTA_CANARY_API.source.files.models + (name.startsWith('CanaryJudge') ? '/results' : '');
      const source = java(folder, `${name}.java`);
      const notNull = [
        ...source.matchAll(/@NotNull\s+(?:@\w+\s+)*(?:(?:protected|private|public)\s+)?[\w<>, ]+?\s(\w+);/g),
      ].map((m) => m[1]);
      expect(notNull.sort()).toEqual([...(definition.required ?? [])].sort());
    },
  );
});
