// Watch events of one rollout come in bursts (its ReplicaSet, then each pod, then the Rollout): an
// enqueue asked for while the same key's is still on its way to Redis waits for it, and all those
// asked for meanwhile are sent as one.

/**
 * Wraps `send` (a deduplicated enqueue of a key, delay 0) so that at most one is in flight per key.
 * A call made while one is in flight is answered by one more send made after that one is answered:
 * Redis decides that one after every event behind the calls was put in the cache, so the job it
 * adds or finds reads them all, which is all each call asked for. A burst of N events costs two
 * decisions instead of N. The returned promise settles with the send that covers the call.
 */
export function coalescedEnqueue(send: (key: string) => Promise<unknown>): (key: string) => Promise<void> {
  interface Flight {
    /** A call came while the send was in flight: one more send is owed. */
    again: boolean;
    /** What the calls made during the current send wait for: the send after it. */
    next: { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void };
  }
  const flights = new Map<string, Flight>();
  const deferred = (): Flight['next'] => {
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Awaited only by calls made during a send; one nobody took must not be an unhandled rejection.
    promise.catch(() => undefined);
    return { promise, resolve, reject };
  };
  const drain = async (key: string, flight: Flight): Promise<void> => {
    while (flight.again) {
      flight.again = false;
      const waiting = flight.next;
      flight.next = deferred();
      try {
        await send(key);
        waiting.resolve();
      } catch (err) {
        waiting.reject(err);
      }
    }
    flights.delete(key);
  };
  return (key) => {
    const inFlight = flights.get(key);
    if (inFlight !== undefined) {
      inFlight.again = true;
      return inFlight.next.promise;
    }
    const flight: Flight = { again: false, next: deferred() };
    flights.set(key, flight);
    const first = send(key).then(() => undefined);
    void first.then(
      () => drain(key, flight),
      () => drain(key, flight),
    );
    return first;
  };
}
