// Deterministic hex digests for simulated IDs (container IDs, image digests, pod IPs): no randomness.

/** FNV-1a over the text with a seed: 32 bits as an unsigned integer. */
export function fnv1a32(text: string, seed = 0): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** A 64-hex-digit digest of the text (the shape of a sha256 or container ID); stable across runs. */
export function stableHex64(text: string): string {
  let out = '';
  for (let seed = 0; seed < 8; seed += 1)
    out += fnv1a32(text, seed * 0x9e3779b1)
      .toString(16)
      .padStart(8, '0');
  return out;
}
