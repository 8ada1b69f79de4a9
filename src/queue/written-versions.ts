// What a rollout's last reconcile passes wrote, handed through Redis to its next job in whichever process runs it.
import type { Redis } from 'ioredis';
import { bullPrefix } from './queue-names.ts';

/**
 * How long a handover is kept: a watch event takes milliseconds to reach every process's cache, so a
 * handover older than this only makes a job wait for writes every cache shows already.
 */
export const WRITTEN_VERSIONS_TTL_MS = 60_000;

/** The Redis string of one rollout's handover: `{prefix}:written:<namespace>/<name>`. */
export function writtenVersionsKey(
  prefix: string | undefined,
  rollout: { namespace: string; name: string },
): string {
  return `${bullPrefix(prefix)}:written:${rollout.namespace}/${rollout.name}`;
}

/**
 * One key per rollout holding the resourceVersions its last passes wrote (JSON, opaque here: the reader
 * checks it, see kube/read-policy.ts), with a TTL. The last job to write wins; what it holds is only a
 * hint of how long to wait for the cache, so a lost or garbled value costs API reads, never a wrong write.
 */
export class RedisWrittenVersions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix?: string,
  ) {}

  async load(rollout: { namespace: string; name: string }): Promise<string | undefined> {
    return (await this.redis.get(writtenVersionsKey(this.prefix, rollout))) ?? undefined;
  }

  async save(rollout: { namespace: string; name: string }, value: string): Promise<void> {
    await this.redis.set(writtenVersionsKey(this.prefix, rollout), value, 'PX', WRITTEN_VERSIONS_TTL_MS);
  }
}
