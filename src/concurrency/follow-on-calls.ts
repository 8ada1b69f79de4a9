// At most one call in flight per key; the calls made meanwhile share one more, made once it is answered.

/**
 * Runs calls per key so that at most one is in flight: a call made while one is in flight is answered by
 * the next one, started once that one is answered, together with every other call made meanwhile. Never
 * by the one in flight, which began before the caller asked: whatever the caller wants covered (a watch
 * event in the cache, a push on the remote) happened before its own call, so only an answer started after
 * it covers it. A burst of N calls costs two. Each call settles with the outcome of the one that covers it.
 *
 * The next one runs the `call` of the first caller that waits for it: the calls of one key must be
 * interchangeable.
 */
export function followOnCalls<T>(): (key: string, call: () => Promise<T>) => Promise<T> {
  interface Flight {
    running: Promise<T>;
    /** The call that follows, for those who came while `running` was in flight. */
    next?: Promise<T>;
  }
  const flights = new Map<string, Flight>();
  const ignore = (): void => undefined;
  const start = (key: string, call: () => Promise<T>): Promise<T> => {
    const flight: Flight = { running: call() };
    flights.set(key, flight);
    // A flight with callers waiting for the next one stays until that one replaces it.
    const done = (): void => {
      if (flights.get(key) === flight && flight.next === undefined) flights.delete(key);
    };
    flight.running.then(done, done);
    return flight.running;
  };
  return (key, call) => {
    const flight = flights.get(key);
    if (flight === undefined) return start(key, call);
    flight.next ??= flight.running.then(ignore, ignore).then(() => start(key, call));
    return flight.next;
  };
}
