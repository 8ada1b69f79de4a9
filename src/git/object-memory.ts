// A bounded in-memory map of parsed trees and commits by object id: Git objects never change.
import type { TreeEntry } from './tree-diff.ts';

/** What the diff needs from a commit. */
export interface CommitSummary {
  tree: string;
  parents: string[];
}

/**
 * Least-recently-used memory of parsed trees and commits. A poll's "to" side is the next poll's "from"
 * side, so keeping the trees a diff walked halves the reads of the next one. Bounded by entry count
 * (default 100,000 tree entries, a few tens of MB at most).
 */
export class ObjectMemory {
  private readonly trees = new Map<string, TreeEntry[]>();
  private readonly commits = new Map<string, CommitSummary>();
  private entries = 0;

  constructor(private readonly maxTreeEntries = 100_000) {}

  tree(oid: string): TreeEntry[] | undefined {
    const found = this.trees.get(oid);
    if (found) {
      this.trees.delete(oid);
      this.trees.set(oid, found);
    }
    return found;
  }

  rememberTree(oid: string, entries: TreeEntry[]): void {
    if (entries.length > this.maxTreeEntries || this.trees.has(oid)) return;
    this.trees.set(oid, entries);
    this.entries += entries.length;
    for (const [old, oldEntries] of this.trees) {
      if (this.entries <= this.maxTreeEntries) break;
      this.trees.delete(old);
      this.entries -= oldEntries.length;
    }
  }

  commit(oid: string): CommitSummary | undefined {
    return this.commits.get(oid);
  }

  rememberCommit(oid: string, summary: CommitSummary): void {
    this.commits.set(oid, summary);
    if (this.commits.size > 10_000) {
      const oldest = this.commits.keys().next().value;
      if (oldest !== undefined) this.commits.delete(oldest);
    }
  }
}
