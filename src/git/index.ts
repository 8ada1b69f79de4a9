// The git module's public surface: sources, the smart-HTTP server, manifest diffs, promotion branches, errors.
export { GitSource, DEFAULT_FETCH_DEPTH, DEFAULT_MAX_PACKS, KEPT_FETCHED_COMMITS } from './source.ts';
export type { GitSourceOptions, HistoryRelation, Source, SourceDiff } from './source.ts';
export type { SourceAuth } from './source-auth.ts';
export { serveGitRepositories, DEFAULT_HTTP_BACKEND } from './smart-http-server.ts';
export type { GitServer, GitServerOptions } from './smart-http-server.ts';
export { diffManifests, sameValue } from './manifest-diff.ts';
export type {
  ManifestAdded,
  ManifestChange,
  ManifestChanged,
  ManifestDiff,
  ManifestRemoved,
} from './manifest-diff.ts';
export { manifestKey, specManifestParser } from './manifest-parser.ts';
export type { ManifestFile, ManifestParser, ManifestProblem, SourceManifest } from './manifest-parser.ts';
export { redactUrl, splitRemoteUrl } from './remote-url.ts';
export { GitHttpTransport, CAPABILITIES_TTL_MS } from './http-transport.ts';
export { pushPromotionCommit, DEFAULT_PROMOTION_COMMITTER } from './promotion-branch.ts';
export type {
  PromotionCommitRequest,
  PromotionCommitResult,
  PromotionPushOutcome,
} from './promotion-branch.ts';
export { GitAuthFailedError } from './errors/git-auth-failed.ts';
export { GitObjectMissingError } from './errors/git-object-missing.ts';
export { GitProtocolError } from './errors/git-protocol.ts';
export { GitPushRejectedError } from './errors/git-push-rejected.ts';
export { GitRefNotFoundError } from './errors/git-ref-not-found.ts';
export { GitRepositoryNotFoundError } from './errors/git-repository-not-found.ts';
export { GitSourceError } from './errors/git-source-error.ts';
export { GitUnreachableError } from './errors/git-unreachable.ts';
export type { GitErrorContext, GitStep } from './errors/git-error-context.ts';
