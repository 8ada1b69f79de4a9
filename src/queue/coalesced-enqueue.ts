// Watch events of one rollout come in bursts (its ReplicaSet, then each pod, then the Rollout): an
// enqueue asked for while the same key's is still on its way to Redis waits for it, and all those
// asked for meanwhile are sent as one.
import { followOnCalls } from '../concurrency/follow-on-calls.ts';

/**
 * Wraps `send` (a deduplicated enqueue of a key, delay 0) so that at most one is in flight per key.
 * A call made while one is in flight is answered by one more send made after that one is answered:
 * Redis decides that one after every event behind the calls was put in the cache, so the job it
 * adds or finds reads them all, which is all each call asked for. A burst of N events costs two
 * decisions instead of N. The returned promise settles with the send that covers the call.
 */
export function coalescedEnqueue(send: (key: string) => Promise<unknown>): (key: string) => Promise<void> {
  const run = followOnCalls<unknown>();
  return (key) => run(key, () => send(key)).then(() => undefined);
}
