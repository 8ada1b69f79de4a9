// The kustomize version is asked once per program file, not at every opening of a rendering: each ask is a
// start of the program (~0.1-0.2 s of CPU for kubectl), and a process opens renderings many times (a CLI verb
// after another, a run restarted in place). A program replaced in place is asked again, and an answer that
// names no version is never kept. Counted against a stand-in `kustomize` that notes each run in a file.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findKustomize } from '../../../src/render/kustomize/kustomize-binary.ts';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder holding a `kustomize` that prints `answer` to `version` and appends a line to `runs` each time. */
function standIn(answer: string): { dir: string; runs: () => number; replace: (answer: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-kustomize-version-'));
  dirs.push(dir);
  const log = join(dir, 'runs.log');
  writeFileSync(log, '');
  const program = join(dir, 'kustomize');
  const write = (text: string): void => {
    // The render runs it with an empty PATH: only the shell's built-ins.
    writeFileSync(program, `#!/bin/sh\necho "$1" >> '${log}'\necho '${text}'\n`);
    chmodSync(program, 0o755);
  };
  write(answer);
  return {
    dir,
    runs: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line === 'version').length,
    replace: write,
  };
}

describe('the kustomize version, asked once per program file', () => {
  it('asks once for any number of openings, and again once the program is replaced in place', async () => {
    const kustomize = standIn('{Version:kustomize/v5.4.3 GitCommit:x}');
    for (let i = 0; i < 3; i++) {
      const found = await findKustomize(undefined, kustomize.dir);
      expect(found).toMatchObject({
        path: join(kustomize.dir, 'kustomize'),
        command: 'kustomize',
        version: 'v5.4.3',
      });
    }
    expect(kustomize.runs()).toBe(1);

    kustomize.replace('v5.10.0');
    expect((await findKustomize(undefined, kustomize.dir))?.version).toBe('v5.10.0');
    expect((await findKustomize(undefined, kustomize.dir))?.version).toBe('v5.10.0');
    expect(kustomize.runs()).toBe(2);
  });

  it('asks again each time while the program names no version', async () => {
    const kustomize = standIn('no version here');
    expect((await findKustomize(undefined, kustomize.dir))?.version).toBe('unknown');
    expect((await findKustomize(undefined, kustomize.dir))?.version).toBe('unknown');
    expect(kustomize.runs()).toBe(2);
  });
});
