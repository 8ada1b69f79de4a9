// Which sources a fleet holds a Rollout in: the sources its controller wakes when a wave opens.
import type { Redis } from 'ioredis';
import { bullPrefix } from './queue-names.ts';

/** The Redis set of a fleet's held sources in one cluster: `{prefix}:fleet-held:<namespace>/<name>:<cluster>`. */
export function heldSourcesKey(prefix: string | undefined, fleet: string, cluster: string): string {
  return `${bullPrefix(prefix)}:fleet-held:${fleet}:${cluster}`;
}

/**
 * The sources (by name) whose sync held a fleet's Rollout. Redis holds only work in flight: losing the
 * set loses a wake-up, not a hold (the next scheduled poll of the source looks at its holds again).
 */
export class HeldSources {
  constructor(
    private readonly redis: Redis,
    private readonly prefix?: string,
  ) {}

  async note(fleet: string, cluster: string, source: string): Promise<void> {
    await this.redis.sadd(heldSourcesKey(this.prefix, fleet, cluster), source);
  }

  /** The sources noted for the fleet in `cluster`, forgotten as they are returned (each is woken once). */
  async take(fleet: string, cluster: string): Promise<string[]> {
    const key = heldSourcesKey(this.prefix, fleet, cluster);
    const [[, members]] = (await this.redis.multi().smembers(key).del(key).exec()) as [
      [unknown, string[]],
      unknown,
    ];
    return members.sort();
  }
}
