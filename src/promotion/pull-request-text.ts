// The pull request's title and body, with a marker that lets a later pass (or process) read what it promotes.

/** What a promotion pull request carries, written into and read back from its body. */
export interface PromotionMarker {
  promotion: string;
  rollout: string;
  revision: string;
  /** Revisions that aborted after this one, already reported on the pull request. */
  abortedAfter?: string;
  /** The auto-merge gate already explained on the pull request (see promotion-gates.ts), so it is told once. */
  gateNote?: string;
  /** The digest of the promotion's `files` it carries (plan-file-edits.ts); absent without `files`. */
  files?: string;
}

const MARKER = /<!-- rollgate:promotion (\{.*?\}) -->/;

/** The marker line, machine-readable and invisible in the rendered pull request. */
export function markerLine(marker: PromotionMarker): string {
  return `<!-- rollgate:promotion ${JSON.stringify(marker)} -->`;
}

/** The marker in a pull request body, or undefined when it has none (a pull request Rollgate did not write). */
export function readMarker(body: string): PromotionMarker | undefined {
  const match = MARKER.exec(body);
  if (match?.[1] === undefined) return undefined;
  try {
    const value = JSON.parse(match[1]) as Partial<PromotionMarker>;
    if (
      typeof value.promotion !== 'string' ||
      typeof value.rollout !== 'string' ||
      typeof value.revision !== 'string'
    )
      return undefined;
    return {
      promotion: value.promotion,
      rollout: value.rollout,
      revision: value.revision,
      ...(typeof value.abortedAfter === 'string' ? { abortedAfter: value.abortedAfter } : {}),
      ...(typeof value.gateNote === 'string' ? { gateNote: value.gateNote } : {}),
      ...(typeof value.files === 'string' ? { files: value.files } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The tag (or digest) part of an image reference, for the title. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return image.slice(at + 1, at + 1 + 19);
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > slash ? image.slice(colon + 1) : 'latest';
}

/** What the body reports about the canary that earned the promotion. */
export interface PromotionEvidence {
  fromSource: string;
  toSource: string;
  sourceCommit: string;
  images: Array<{ container: string; image: string }>;
  /** The canary steps walked, as `setWeight 20`, `pause 1m`, … */
  steps: string[];
  analysis: Array<{ name: string; phase: string }>;
  /** How long the canary took, when known. */
  durationSeconds?: number;
}

/** `Promote <rollout> to <image tag>` (the first container's image). */
export function pullRequestTitle(rollout: string, images: ReadonlyArray<{ image: string }>): string {
  return `Promote ${rollout} to ${images[0] === undefined ? 'its healthy revision' : imageTag(images[0].image)}`;
}

/** The files section of a body: each target path and what happens to it. */
export function filesSection(edits: ReadonlyArray<{ path: string; change: string }> | undefined): string[] {
  if (edits === undefined || edits.length === 0) return [];
  return [
    '',
    '**Files** (copied from the source as they are):',
    ...edits.map((e) => `- \`${e.path}\` ${e.change}`),
  ];
}

/** The pull request body: evidence first, the marker last. */
export function pullRequestBody(
  marker: PromotionMarker,
  evidence: PromotionEvidence,
  files?: ReadonlyArray<{ path: string; change: string }>,
): string {
  const lines = [
    `Rollgate promotes **${marker.rollout}** from \`${evidence.fromSource}\` to \`${evidence.toSource}\`: revision \`${marker.revision}\` finished a healthy canary there.`,
    '',
    `- Source commit: \`${evidence.sourceCommit || 'unknown'}\``,
    `- Revision (pod-template hash): \`${marker.revision}\``,
    ...evidence.images.map((i) => `- Image \`${i.container}\`: \`${i.image}\``),
    `- Steps walked: ${evidence.steps.length === 0 ? 'none (promoted at once)' : evidence.steps.map((s) => `\`${s}\``).join(' → ')}`,
    `- Analysis: ${evidence.analysis.length === 0 ? 'none' : evidence.analysis.map((a) => `${a.name} ${a.phase}`).join(', ')}`,
    ...(evidence.durationSeconds !== undefined
      ? [`- Canary duration: ${Math.round(evidence.durationSeconds)} s`]
      : []),
  ];
  lines.push(...filesSection(files));
  if (marker.abortedAfter !== undefined)
    lines.push(
      '',
      `> A newer revision \`${marker.abortedAfter}\` aborted in \`${evidence.fromSource}\`; this pull request still promotes the last healthy one.`,
    );
  lines.push('', markerLine(marker));
  return lines.join('\n');
}
