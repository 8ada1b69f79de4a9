// What a source notification's templates read as `.source`: the source and its status, with no secret in it.
import type { ObservedSourceStatus } from './detect-source-transitions.ts';

/** The source as templates see it (`.source.name`, `.source.status.message`, …): plain data, for a queue job. */
export interface SourceTemplateData {
  /** The internal source name (`apps`, or `<namespace>.<name>` for a GitSource object). */
  name: string;
  /** The repository URL without user, password or token (the caller removes them: src/git's redactUrl). */
  url: string;
  branch: string;
  path: string;
  /** The status written by the transition: phase, message, commit, problems, health, times. */
  status: {
    phase: string;
    message: string;
    commit?: string;
    lastSyncedAt?: string;
    lastAttemptAt: string;
    problems: Array<{ file: string; line: number; message: string }>;
    health?: { status: string; message: string };
  };
  [field: string]: unknown;
}

/** The template data of a source after a transition; `source.url` must be without credentials already. */
export function sourceTemplateData(
  source: { name: string; url: string; branch: string; path: string },
  status: ObservedSourceStatus,
): SourceTemplateData {
  const health = status.health;
  return {
    name: source.name,
    url: source.url,
    branch: source.branch,
    path: source.path,
    status: {
      phase: status.phase,
      message: status.message,
      ...(status.commit !== undefined && { commit: status.commit }),
      ...(status.lastSyncedAt !== undefined && { lastSyncedAt: status.lastSyncedAt }),
      lastAttemptAt: status.lastAttemptAt,
      problems: (status.problems ?? []).map(({ file, line, message }) => ({ file, line, message })),
      ...(health?.status !== undefined && {
        health: { status: health.status, message: health.message ?? '' },
      }),
    },
  };
}
