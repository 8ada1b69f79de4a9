// Two reads sent together whose failure is told as if they had been sent one after the other.

/**
 * Both results; when either failed, the first one's failure in argument order, not in time: a view that
 * lists a rollout's runs beside its other objects fails as it did when it listed them afterwards.
 */
export async function bothOrFirstFailure<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}
