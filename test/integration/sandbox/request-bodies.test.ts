// How the sandbox API server reads request bodies, as kubectl and client libraries see it: media types,
// YAML, names and kinds that disagree with the URL, dry runs, and patch-engine errors as Status answers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/clock.ts';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.ts';

const NS = 'default';
let sandbox: Sandbox;

beforeEach(async () => {
  sandbox = await startSandbox({ clock: new ManualClock(Date.UTC(2026, 0, 1)) });
});
afterEach(async () => {
  await sandbox.stop();
});

interface Answer {
  status: number;
  body: { kind?: string; reason?: string; message?: string; metadata?: { name?: string }; data?: unknown };
}

async function send(method: string, path: string, contentType: string, body: string): Promise<Answer> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { 'Content-Type': contentType },
    body,
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const configMaps = `/api/v1/namespaces/${NS}/configmaps`;

function replicaSet(name: string): object {
  return {
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    },
  };
}

async function configMapNames(): Promise<string[]> {
  const list = (await (await fetch(`${sandbox.url}${configMaps}`)).json()) as {
    items: Array<{ metadata: { name: string } }>;
  };
  return list.items.map((item) => item.metadata.name);
}

describe('create (POST)', () => {
  it('accepts JSON and YAML, and refuses other media types with 415', async () => {
    const json = await send(
      'POST',
      configMaps,
      'application/json; charset=utf-8',
      '{"metadata":{"name":"a"}}',
    );
    expect(json).toMatchObject({ status: 201, body: { kind: 'ConfigMap', metadata: { name: 'a' } } });
    const yaml = await send('POST', configMaps, 'application/yaml', 'metadata:\n  name: b\ndata:\n  k: v\n');
    expect(yaml).toMatchObject({ status: 201, body: { metadata: { name: 'b' }, data: { k: 'v' } } });
    const text = await send('POST', configMaps, 'text/plain', 'metadata: {name: c}');
    expect(text).toMatchObject({ status: 415, body: { reason: 'UnsupportedMediaType' } });
    expect(text.body.message).toContain('accepted media types include: application/json, application/yaml');
    expect(await configMapNames()).toEqual(['a', 'b']);
  });

  it('answers 400 for YAML it cannot read and for a kind or apiVersion that is not the URL’s', async () => {
    const broken = await send('POST', configMaps, 'application/yaml', 'metadata: {name: [');
    expect(broken).toMatchObject({ status: 400, body: { reason: 'BadRequest' } });
    expect(broken.body.message).toMatch(/^error decoding YAML: /);
    const wrongKind = await send(
      'POST',
      configMaps,
      'application/json',
      '{"kind":"Secret","metadata":{"name":"x"}}',
    );
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.message).toBe(
      'the API version in the data (undefined) does not match the expected API version (v1)',
    );
    const wrongVersion = await send(
      'POST',
      configMaps,
      'application/json',
      '{"apiVersion":"apps/v1","metadata":{"name":"x"}}',
    );
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.body.message).toBe(
      'the API version in the data (apps/v1) does not match the expected API version (v1)',
    );
    expect(await configMapNames()).toEqual([]);
  });

  it('answers a dry run with the object as it would be created, and stores nothing', async () => {
    const dry = await send(
      'POST',
      `${configMaps}?dryRun=All`,
      'application/json',
      '{"metadata":{"name":"d"}}',
    );
    expect(dry).toMatchObject({
      status: 201,
      body: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'd' } },
    });
    expect(await configMapNames()).toEqual([]);
  });
});

describe('replace (PUT)', () => {
  it('refuses a body whose name differs from the URL, and takes the URL’s name when the body has none', async () => {
    await send('POST', configMaps, 'application/json', '{"metadata":{"name":"p"}}');
    const other = await send('PUT', `${configMaps}/p`, 'application/json', '{"metadata":{"name":"q"}}');
    expect(other.status).toBe(400);
    expect(other.body.message).toBe('the name of the object (q) does not match the name on the URL (p)');
    const unnamed = await send('PUT', `${configMaps}/p`, 'application/json', '{"data":{"k":"v"}}');
    expect(unnamed).toMatchObject({ status: 200, body: { metadata: { name: 'p' }, data: { k: 'v' } } });
  });
});

describe('server-side apply (PATCH application/apply-patch+yaml)', () => {
  const apply = (name: string, yaml: string, query = ''): Promise<Answer> =>
    send('PATCH', `${configMaps}/${name}?fieldManager=t${query}`, 'application/apply-patch+yaml', yaml);

  it('creates with 201 (nothing on a dry run), then updates with 200', async () => {
    const doc = (value: string): string =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  k: ${value}\n`;
    expect(await apply('s', doc('dry'), '&dryRun=All')).toMatchObject({
      status: 201,
      body: { data: { k: 'dry' } },
    });
    expect(await configMapNames()).toEqual([]);
    expect(await apply('s', doc('one'))).toMatchObject({ status: 201, body: { data: { k: 'one' } } });
    expect(await apply('s', doc('two'))).toMatchObject({ status: 200, body: { data: { k: 'two' } } });
  });

  it('answers 400 for unreadable YAML, another name, or another kind', async () => {
    const broken = await apply('s', 'metadata: {name: [');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/^error decoding YAML: /);
    const renamed = await apply('s', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n');
    expect(renamed.body.message).toBe('the name of the object (t) does not match the name on the URL (s)');
    const secret = await apply('s', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n');
    expect(secret.status).toBe(400);
    expect(secret.body.message).toBe(
      'the API version in the data (v1) does not match the expected API version (v1)',
    );
    expect(await configMapNames()).toEqual([]);
  });
});

describe('patch errors as Status answers', () => {
  it('answers 422 for a JSON patch that does not apply and 415 for a scale patch of an unknown type', async () => {
    await send('POST', configMaps, 'application/json', '{"metadata":{"name":"j"}}');
    const failedTest = await send(
      'PATCH',
      `${configMaps}/j`,
      'application/json-patch+json',
      '[{"op":"test","path":"/data/k","value":"v"}]',
    );
    expect(failedTest).toMatchObject({ status: 422, body: { reason: 'Invalid' } });

    const replicaSets = `/apis/apps/v1/namespaces/${NS}/replicasets`;
    const created = await send('POST', replicaSets, 'application/json', JSON.stringify(replicaSet('r')));
    expect(created.status).toBe(201);
    const scale = `${replicaSets}/r/scale`;
    const unknown = await send('PATCH', scale, 'application/json', '{"spec":{"replicas":2}}');
    expect(unknown).toMatchObject({ status: 415, body: { reason: 'UnsupportedMediaType' } });
    const merged = await send('PATCH', scale, 'application/merge-patch+json', '{"spec":{"replicas":3}}');
    expect(merged).toMatchObject({ status: 200, body: { kind: 'Scale', spec: { replicas: 3 } } });
  });
});

describe('eviction bodies', () => {
  it('reads a YAML Eviction and refuses other media types with 415', async () => {
    await send(
      'POST',
      `/api/v1/namespaces/${NS}/pods`,
      'application/json',
      '{"metadata":{"name":"e"},"spec":{"containers":[{"name":"app","image":"app:1"}]}}',
    );
    const eviction = `/api/v1/namespaces/${NS}/pods/e/eviction`;
    const text = await send('POST', eviction, 'text/plain', '{}');
    expect(text).toMatchObject({ status: 415, body: { reason: 'UnsupportedMediaType' } });
    const broken = await send('POST', eviction, 'application/yaml', 'metadata: {name: [');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/^error decoding YAML: /);
    const yaml = await send(
      'POST',
      eviction,
      'application/yaml',
      'apiVersion: policy/v1\nkind: Eviction\nmetadata:\n  name: e\n  namespace: default\n',
    );
    expect(yaml.status).toBe(201);
  });
});

describe('missing objects', () => {
  it('answers GET, PUT, PATCH and /scale of a missing object with the same 404 Status', async () => {
    const path = `/apis/apps/v1/namespaces/${NS}/replicasets/absent`;
    const expected = {
      status: 404,
      body: {
        reason: 'NotFound',
        message: 'replicasets.apps "absent" not found',
        details: { name: 'absent', group: 'apps', kind: 'replicasets' },
      },
    };
    const get = await fetch(`${sandbox.url}${path}`);
    expect({ status: get.status, body: (await get.json()) as unknown }).toMatchObject(expected);
    expect(await send('PUT', path, 'application/json', JSON.stringify(replicaSet('absent')))).toMatchObject(
      expected,
    );
    expect(await send('PATCH', path, 'application/merge-patch+json', '{}')).toMatchObject(expected);
    expect(await send('PATCH', `${path}/scale`, 'application/merge-patch+json', '{}')).toMatchObject(
      expected,
    );
  });
});
