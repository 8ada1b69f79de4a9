// The branch heads this process's own ref checks returned: what lets a sync trust a head read back from Redis.

/**
 * The last branch head each source's ref check returned in this process. A head read from Redis (the
 * observation hash a poll writes) is only a claim: anyone who can write to Redis can write any commit
 * there, the tip of an unmerged branch included. A sync moves to a recorded head without asking the
 * remote again only when this process's own ref check returned that very commit; any other head is
 * checked against the remote first (see syncSource). Kept in memory, never shared: that is the point.
 */
export class HeadWitness {
  private readonly seen = new Map<string, string>();

  /** Notes that the remote answered `commit` as the branch head of `source` (undefined: no branch). */
  saw(source: string, commit: string | undefined): void {
    if (commit === undefined) this.seen.delete(source);
    else this.seen.set(source, commit);
  }

  /** True when the last ref check of `source` in this process returned `commit`. */
  vouchesFor(source: string, commit: string): boolean {
    return this.seen.get(source) === commit;
  }
}
