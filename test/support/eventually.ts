// Waits for a condition that a running system reaches on its own (real time, bounded).

/** Calls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}
