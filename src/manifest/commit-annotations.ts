// Annotations that tie a revision to the Git commit it came from. In spec/ (a leaf) because the sync writes
// them on what it applies, the pure planner copies them from a Rollout to its new ReplicaSets, and the
// dashboard and `rollgate get` read them back: none of those may import another's module for two names.

/** The commit an object was last applied from. */
export const COMMIT_ANNOTATION = 'rollgate.dev/commit';
/** Who wrote that commit (`Name <email>`), so the dashboard can say whose change a revision is. */
export const COMMIT_AUTHOR_ANNOTATION = 'rollgate.dev/commit-author';
