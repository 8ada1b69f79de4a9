// The credentials of a Git source, as the config layer resolved them: what fetch and push offer.

/** Credentials of a source, already resolved from env/files by the config layer. Never logged. */
export interface SourceAuth {
  username?: string;
  password?: string;
  /** A token (GitHub/GitLab/Gitea/Bitbucket access token): sent as the basic-auth password. */
  token?: string;
}
