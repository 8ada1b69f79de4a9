// What a source notification's templates read as `.source`: the source and its status, with no secret in it.
import type { ObservedSourceStatus } from './detect-source-transitions.ts';

/** The source as templates see it (`.source.name`, `.source.status.message`, …): plain data, for a queue job. */
export interface SourceTemplateData {
  /** The internal source name (`apps`, or `<namespace>.<name>` for a GitSource object). */
  name: string;
  /** The repository URL without user, password or token. */
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

/**
 * A repository URL as it may be shown: the user and password of an http(s) URL removed (a token is often
 * given as one or the other). Anything that is not such a URL (a path, `file://`) is shown as it is.
 */
export function urlWithoutCredentials(url: string): string {
  if (!/^https?:\/\//i.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    // Not readable as a URL: nothing to strip safely, so nothing of it is shown.
    return '(unreadable URL)';
  }
}

/** The template data of a source after a transition. */
export function sourceTemplateData(
  source: { name: string; url: string; branch: string; path: string },
  status: ObservedSourceStatus,
): SourceTemplateData {
  const health = status.health;
  return {
    name: source.name,
    url: urlWithoutCredentials(source.url),
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
