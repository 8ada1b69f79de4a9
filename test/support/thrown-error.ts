// The error of one type that a call throws, for tests that then look at its code and message.

/**
 * Runs `run` and returns what it threw when that is a `type`; rethrows any other error, and fails when
 * nothing was thrown, so a call that stopped throwing fails the test instead of passing it.
 */
export function thrownError<E extends Error>(
  type: abstract new (...args: never[]) => E,
  run: () => unknown,
): E {
  try {
    run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}`);
}
