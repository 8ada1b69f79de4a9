// One kustomize run's bounds: nothing reaches the network, a timeout and an output limit kill it, nothing of Rollgate's environment leaks, render folders go away.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RenderFailedError } from '../../../src/render/errors/render-failed-error.ts';
import { RenderOutputTooLargeError } from '../../../src/render/errors/render-output-too-large-error.ts';
import { RenderTimeoutError } from '../../../src/render/errors/render-timeout-error.ts';
import { findKustomize, type KustomizeBinary } from '../../../src/render/kustomize/kustomize-binary.ts';
import { kustomizeMessage, runKustomize } from '../../../src/render/kustomize/kustomize-process.ts';
import { DEFAULT_RENDER_SETTINGS } from '../../../src/render/rendering.ts';
import { renderDirectoryApps } from '../../../src/render/directory-render.ts';
import { makeTempDir, type TempDir } from '../../support/git-fixtures.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function temp(): TempDir {
  const dir = makeTempDir('rollgate-render-test-');
  cleanups.push(() => dir.remove());
  return dir;
}

/** A stand-in "kustomize" (a shell script run by absolute path) doing `body`. */
function script(dir: string, body: string): KustomizeBinary {
  const path = join(dir, 'fake-kustomize');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return { path, command: 'kustomize', version: 'v0.0.0' };
}

/** What `promise` rejected with; fails when it resolved. */
async function thrownError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the render to fail');
}

const LIMITS = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 };

describe('runKustomize', () => {
  it('a remote resource that got past preflight reaches nothing: the proxies point at a closed port', async () => {
    let requests = 0;
    const server: Server = createServer((_req, res) => {
      requests += 1;
      res.end('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n');
    });
    // Not a loopback address: Go sends requests to loopback without a proxy, so the test would not see one.
    const host = Object.values(networkInterfaces())
      .flat()
      .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address;
    expect(host).toBeDefined();
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const work = temp();
    mkdirSync(join(work.path, 'app'));
    writeFileSync(
      join(work.path, 'app/kustomization.yaml'),
      `resources:\n  - http://${host}:${port}/cm.yaml\n`,
    );
    const binary = await findKustomize(undefined);
    expect(binary).toBeDefined();
    const error = await thrownError(
      runKustomize(binary as KustomizeBinary, work.path, 'app', 'app/kustomization.yaml', LIMITS),
    );
    expect(error).toBeInstanceOf(RenderFailedError);
    expect((error as RenderFailedError).code).toBe('render.failed');
    expect(requests).toBe(0);
  });

  it('runs with an empty PATH, HOME in its folder, proxies closed, Git protocols off, and none of our environment', async () => {
    process.env.ROLLGATE_TEST_SECRET = 'never-passed-on';
    cleanups.push(() => {
      delete process.env.ROLLGATE_TEST_SECRET;
    });
    const work = temp();
    const env = await runKustomize(
      script(temp().path, 'exec /usr/bin/env'),
      work.path,
      '',
      'kustomization.yaml',
      LIMITS,
    );
    const vars = Object.fromEntries(
      env
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2)),
    );
    expect(vars).toMatchObject({
      PATH: '',
      HOME: work.path,
      HTTPS_PROXY: 'http://127.0.0.1:1',
      HTTP_PROXY: 'http://127.0.0.1:1',
      ALL_PROXY: 'http://127.0.0.1:1',
      GIT_ALLOW_PROTOCOL: 'none',
    });
    expect(vars.ROLLGATE_TEST_SECRET).toBeUndefined();
  });

  it('a render past its timeout is killed, with a typed error naming the key', async () => {
    const work = temp();
    const started = performance.now();
    const error = await thrownError(
      runKustomize(script(work.path, 'exec /bin/sleep 30'), work.path, '', 'app/kustomization.yaml', {
        ...LIMITS,
        timeoutMs: 300,
      }),
    );
    expect(error).toBeInstanceOf(RenderTimeoutError);
    expect(error).toMatchObject({ code: 'render.timeout', file: 'app/kustomization.yaml' });
    expect((error as Error).message).toContain('render.kustomize.timeoutSeconds');
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('an endless output is cut at the limit: the process killed, nothing kept', async () => {
    const work = temp();
    const error = await thrownError(
      runKustomize(
        script(work.path, 'exec /usr/bin/yes kind: ConfigMap'),
        work.path,
        '',
        'app/kustomization.yaml',
        {
          ...LIMITS,
          maxOutputBytes: 256 * 1024,
        },
      ),
    );
    expect(error).toBeInstanceOf(RenderOutputTooLargeError);
    expect(error).toMatchObject({ code: 'render.output-too-large', limit: 256 * 1024 });
  });

  it("kustomize's message is kept in its words: kubectl's log prefix, the render folder and newlines taken out, bounded", () => {
    const work = '/tmp/rollgate-render-abc';
    const stderr =
      'E1204 04:16:07.287549   12635 run.go:72] "command failed" err="accumulating resources: ' +
      `open ${work}/apps/web/missing.yaml: no such file or directory \\"x\\""\n`;
    expect(kustomizeMessage(stderr, work)).toBe(
      'accumulating resources: open apps/web/missing.yaml: no such file or directory "x"',
    );
    expect(kustomizeMessage(`Error: ${'y'.repeat(10_000)}\n`, work)).toHaveLength(2_000);
  });
});

describe('renderDirectoryApps', () => {
  it('renders the kustomizations of a folder with the preflight of a sync, and leaves no render folder behind', async () => {
    const repo = temp();
    const files: Record<string, string> = {
      'base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n',
      'overlays/dev/kustomization.yaml': 'resources: [../../base]\nnamePrefix: dev-\n',
      'overlays/remote/kustomization.yaml': 'resources:\n  - ../../base\n  - github.com/example/x?ref=v1\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(repo.path, path, '..'), { recursive: true });
      writeFileSync(join(repo.path, path), text);
    }
    // A temporary folder of this test's own: other files render in parallel forks and their render
    // folders come and go in the shared one.
    const tmp = mkdtempSync(join(tmpdir(), 'rollgate-render-test-tmp-'));
    const savedTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    let found;
    try {
      found = await renderDirectoryApps(
        repo.path,
        '.',
        'auto',
        DEFAULT_RENDER_SETTINGS,
        await findKustomize(undefined),
      );
    } finally {
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmpdir;
    }
    const byDir = new Map(found.apps.map((app) => [app.dir, app.outcome]));
    expect([...byDir.keys()].sort()).toEqual(['overlays/dev', 'overlays/remote']);
    expect(byDir.get('overlays/dev')).toMatchObject({
      ok: true,
      text: expect.stringContaining('name: dev-settings'),
    });
    expect(byDir.get('overlays/remote')).toMatchObject({
      ok: false,
      ran: false,
      problems: [{ file: 'overlays/remote/kustomization.yaml', line: 3 }],
    });
    expect(readdirSync(tmp)).toEqual([]);
    rmSync(tmp, { recursive: true, force: true });
  });
});
