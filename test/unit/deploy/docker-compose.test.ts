// docker-compose.yml cannot run here (no Docker engine): check that what it promises matches the code.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/main.ts';
import { configKeys, loadConfig, resolveSecret } from '../../../src/config/index.ts';

interface ComposeService {
  build?: string;
  image?: string;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
  services: Record<string, ComposeService>;
};
const rollgateServices = Object.entries(compose.services).filter(([, s]) => s.build === '.');

/** A service's environment as Compose passes it when the host sets none: `${VAR:-default}` → default. */
function resolvedEnvironment(service: ComposeService | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service?.environment ?? {}).map(([k, v]) => [k, v.replace(/\$\{[^}]*:-([^}]*)\}/g, '$1')]),
  );
}

describe('docker-compose.yml', () => {
  it('describes Redis, the all-in-one process and the split poller / reconciler', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['poller', 'reconciler', 'redis', 'rollgate']);
    expect(compose.services.redis?.image).toMatch(/^redis:7/);
    expect(compose.services.rollgate?.ports).toContain('8080:8080');
  });

  it('serves webhooks from whichever process runs the poller: published port and a webhook secret', () => {
    for (const name of ['rollgate', 'poller']) {
      const service = compose.services[name];
      expect(service?.ports, name).toContain('8080:8080');
      const env = resolvedEnvironment(service);
      const config = loadConfig({ file: 'config/rollgate.yaml', env });
      expect(resolveSecret('webhooks.github', config.webhooks.github, env), name).toBe('change-me');
    }
  });

  it('runs only commands the CLI has', () => {
    const commands = new Set(buildProgram().commands.map((c) => c.name()));
    for (const [name, service] of rollgateServices) {
      const command = service.command?.[0];
      expect(commands.has(command ?? ''), `${name} runs "${command}"`).toBe(true);
    }
  });

  it('sets only environment variables Rollgate reads, and they make a valid configuration', () => {
    const known = new Set(configKeys().map((k) => k.env));
    for (const [name, service] of rollgateServices) {
      const env = service.environment ?? {};
      const rollgateVars = Object.keys(env).filter((k) => k.startsWith('ROLLGATE_'));
      for (const key of rollgateVars) expect(known.has(key), `${name}: ${key}`).toBe(true);
      const config = loadConfig({ file: 'config/rollgate.yaml', env: resolvedEnvironment(service) });
      expect(config.redis.url).toBe('redis://redis:6379');
      expect(service.depends_on?.redis?.condition).toBe('service_healthy');
    }
  });

  it('builds from a Dockerfile whose default command is the all-in-one process', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "bin\/rollgate.js"\]/);
    expect(dockerfile).toMatch(/CMD \["run", "--config", "\/app\/config\/rollgate.yaml"\]/);
    expect(dockerfile).toMatch(/EXPOSE 8080/);
  });

  it('runs on the Node 24 release that .ci/run builds and unit-tests on, in both stages', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const image = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-bookworm-slim$/m.exec(dockerfile)?.[1];
    const ci = /^NODE24_VERSION=(\S+)$/m.exec(readFileSync('.ci/run', 'utf8'))?.[1];
    expect(image).toMatch(/^24\./);
    expect(ci).toBe(image);
    expect(dockerfile.match(/^FROM .*$/gm)).toEqual([
      'FROM ${NODE_IMAGE} AS build',
      'FROM --platform=${BUILDPLATFORM} ${NODE_IMAGE} AS kustomize',
      'FROM ${NODE_IMAGE}',
    ]);
  });

  it('ships the kustomize of kubectl 1.32 (v5.5.0), its download checked by SHA-256 for amd64 and arm64', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const stage = dockerfile.split(/^FROM /m).find((part) => / AS kustomize$/m.test(part)) ?? '';
    expect(/^ARG KUSTOMIZE_VERSION=(\S+)$/m.exec(stage)?.[1]).toBe('5.5.0');
    for (const arch of ['AMD64', 'ARM64']) {
      const sum = new RegExp(`^ARG KUSTOMIZE_SHA256_${arch}=(\\S+)$`, 'm').exec(stage)?.[1];
      expect(sum, arch).toMatch(/^[0-9a-f]{64}$/);
      expect(stage).toContain(`${arch.toLowerCase()}) sum="\${KUSTOMIZE_SHA256_${arch}}"`);
    }
    // The sum is checked before the archive is unpacked.
    expect(stage.indexOf('sha256sum --check')).toBeGreaterThan(-1);
    expect(stage.indexOf('sha256sum --check')).toBeLessThan(stage.indexOf('tar -xzf'));
    const runtime = dockerfile.split(/^FROM /m).at(-1) ?? '';
    expect(runtime).toContain('COPY --from=kustomize /usr/local/bin/kustomize /usr/local/bin/kustomize');
  });

  it('ships the dashboard page in the runtime image (the dashboard reads it at start)', () => {
    const runtime =
      readFileSync('Dockerfile', 'utf8')
        .split(/^FROM /m)
        .at(-1) ?? '';
    expect(runtime).toContain('COPY src/server/dashboard/assets ./src/server/dashboard/assets');
  });
});
