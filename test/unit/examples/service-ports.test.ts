// The example manifests sync on a real API server: every Service port names its protocol.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = join(import.meta.dirname, '../../..');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry) ? [path] : [];
  });
}

interface ServiceDoc {
  kind?: string;
  metadata?: { name?: string };
  spec?: { ports?: Array<{ port?: number; protocol?: string }> };
}

describe('example Services', () => {
  it('give every port a protocol (kube-apiserver 1.20 refuses server-side apply without it: 500, every time)', () => {
    const services: string[] = [];
    const missing: string[] = [];
    for (const file of yamlFiles(join(ROOT, 'examples'))) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        const object = doc.toJS() as ServiceDoc | null;
        if (object?.kind !== 'Service') continue;
        const where = `${relative(ROOT, file)}: Service ${object.metadata?.name ?? '?'}`;
        services.push(where);
        for (const port of object.spec?.ports ?? [])
          if (port.protocol === undefined) missing.push(`${where} port ${port.port ?? '?'}`);
      }
    }
    // The examples do have Services (the check would pass on none).
    expect(services.length).toBeGreaterThanOrEqual(7);
    expect(missing).toEqual([]);
  });
});
