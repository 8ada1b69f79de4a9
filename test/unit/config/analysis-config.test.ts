// The analysis.* keys (issue 26): which hosts providers may reach, which ServiceAccounts job metrics may name.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.ts';

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rollgate-config-')), 'rollgate.yaml');
  writeFileSync(file, text);
  return file;
}

describe('analysis configuration', () => {
  it('defaults to no allow list, no extra deny entries and no extra ServiceAccounts', () => {
    expect(loadConfig({ env: {} }).analysis).toEqual({
      allowedHosts: [],
      deniedHosts: [],
      jobServiceAccounts: [],
    });
  });

  it('reads names, wildcards, IPs and CIDR blocks', () => {
    const file = tempFile(
      "analysis:\n  allowedHosts: [prometheus.monitoring, '*.svc.cluster.local', 10.0.0.0/8, '::1']\n  jobServiceAccounts: [smoke]\n",
    );
    const config = loadConfig({ file, env: {} });
    expect(config.analysis.allowedHosts).toEqual([
      'prometheus.monitoring',
      '*.svc.cluster.local',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(config.analysis.jobServiceAccounts).toEqual(['smoke']);
  });

  it('refuses a bad entry, naming the key and the entry', () => {
    const file = tempFile('analysis:\n  deniedHosts: [10.0.0.0/8, 10.0.0.0/33, "bad host"]\n');
    let problems: string[] = [];
    try {
      loadConfig({ file, env: {} });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems.map((p) => `${p.path}: ${p.message}`);
    }
    expect(problems).toEqual([
      'analysis.deniedHosts[1]: "10.0.0.0/33": the prefix length must be a whole number from 0 to 32',
      'analysis.deniedHosts[2]: "bad host": not a host name, IP address or CIDR block',
    ]);
  });
});
