// Rendered output by input key, least recently used dropped first, bounded by bytes (render.cacheBytes).

/**
 * What renders produced, by input key: the old side of a diff is normally the new side of the previous
 * one. Bounded by the text's size (two bytes a character, as JavaScript holds it); an output larger than
 * the whole budget is not kept.
 */
export class RenderCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const text = this.entries.get(key);
    if (text === undefined) return undefined;
    // Map order is insertion order: reinserting makes it the most recently used.
    this.entries.delete(key);
    this.entries.set(key, text);
    return text;
  }

  set(key: string, text: string): void {
    const size = text.length * 2;
    const known = this.entries.get(key);
    if (known !== undefined) {
      this.entries.delete(key);
      this.bytes -= known.length * 2;
    }
    if (size > this.maxBytes) return;
    for (const [oldest, value] of this.entries) {
      if (this.bytes + size <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.length * 2;
    }
    this.entries.set(key, text);
    this.bytes += size;
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }
}
