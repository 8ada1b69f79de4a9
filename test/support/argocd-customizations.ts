// Argo CD's resource customizations (its Lua health checks and actions), read at test time from a checkout of
// argoproj/argo-cd beside this repository, never copied in: they are the contract Rollgate's Rollout status
// must meet, exactly as upstream wrote it. ROLLGATE_ARGOCD_REPO names the checkout; otherwise it is found
// beside the repository as upstream-checkout.ts says. Without one, the tests that run the scripts skip, each
// file saying so in one line; ROLLGATE_REQUIRE_ARGOCD=1 makes that a failure. It is not tied to
// ROLLGATE_REQUIRE_CORPUS: a CI clone may have the corpus beside it without a fetched argo-cd.
import { defaultCheckoutPath, upstreamCheckout } from './upstream-checkout.ts';
import type { UpstreamRepository } from './upstream-checkout.ts';

/** The variable that names the argo-cd checkout. */
export const ARGOCD_REPO_ENV = 'ROLLGATE_ARGOCD_REPO';

/** The variable that makes a missing checkout fail the tests instead of skipping them. */
export const REQUIRE_ARGOCD_ENV = 'ROLLGATE_REQUIRE_ARGOCD';

const ARGO_CD: UpstreamRepository = {
  github: 'argoproj/argo-cd',
  repoEnv: ARGOCD_REPO_ENV,
  requireEnv: REQUIRE_ARGOCD_ENV,
};

/** Where the checkout is looked for without the variable: beside the repository. */
export const DEFAULT_ARGOCD_REPO = defaultCheckoutPath(ARGO_CD);

/** The folder of one kind's customizations inside argo-cd. */
function kindFolder(group: string, kind: string): string {
  return `resource_customizations/${group}/${kind}`;
}

/** A checkout of argo-cd as the tests read it. */
export interface ArgoCdCustomizations {
  /** True when no checkout is there: skip what reads it (`describe.skipIf(argocd.missing)`). */
  readonly missing: boolean;
  /** The git dir or work tree read. */
  readonly repo: string;
  /** The commit read (HEAD of the checkout), for messages. */
  readonly commit: string;
  /** The text of `resource_customizations/GROUP/KIND/PATH` at that commit. */
  script(group: string, kind: string, path: string): string;
  /** The action names under `…/GROUP/KIND/actions/` (each a folder with an action.lua). */
  actions(group: string, kind: string): string[];
}

/**
 * The argo-cd checkout for the test file `testFile` (the caller's `import.meta.filename`). When it is absent,
 * one line on stderr names what is missing and how to get it, and the caller skips; under
 * ROLLGATE_REQUIRE_ARGOCD=1 this throws instead, failing the file as it loads.
 */
export function argoCdCustomizations(testFile: string): ArgoCdCustomizations {
  const checkout = upstreamCheckout(ARGO_CD, testFile, "the tests that run Argo CD's Lua customizations");
  return {
    missing: checkout.missing,
    repo: checkout.repo,
    commit: checkout.commit,
    script: (group, kind, path) => checkout.show(`${kindFolder(group, kind)}/${path}`),
    actions: (group, kind) =>
      checkout
        .list(`${kindFolder(group, kind)}/actions`)
        .filter((name) => checkout.has(`${kindFolder(group, kind)}/actions/${name}/action.lua`)),
  };
}
