// Argo Rollouts' own test manifests (test/e2e), read at test time from a checkout of argoproj/argo-rollouts
// beside this repository, never copied in: what Argo's end-to-end suite applies, and what it expects the API
// server or controller to refuse. ROLLGATE_ARGO_ROLLOUTS_REPO names the checkout; otherwise it is found beside
// the repository as upstream-checkout.ts says. Without one, the tests that read it skip, each file saying so in
// one line; ROLLGATE_REQUIRE_ARGO_ROLLOUTS=1 (set by .ci/run when it finds one) makes that a failure.
import { upstreamCheckout } from './upstream-checkout.ts';
import type { UpstreamCheckout, UpstreamRepository } from './upstream-checkout.ts';

/** The variable that names the argo-rollouts checkout. */
export const ARGO_ROLLOUTS_REPO_ENV = 'ROLLGATE_ARGO_ROLLOUTS_REPO';

/** The variable that makes a missing checkout fail the tests instead of skipping them. */
export const REQUIRE_ARGO_ROLLOUTS_ENV = 'ROLLGATE_REQUIRE_ARGO_ROLLOUTS';

const ARGO_ROLLOUTS: UpstreamRepository = {
  github: 'argoproj/argo-rollouts',
  repoEnv: ARGO_ROLLOUTS_REPO_ENV,
  requireEnv: REQUIRE_ARGO_ROLLOUTS_ENV,
};

/** The argo-rollouts checkout for the test file `testFile` (the caller's `import.meta.filename`). */
export function argoRolloutsCheckout(testFile: string, skips: string): UpstreamCheckout {
  return upstreamCheckout(ARGO_ROLLOUTS, testFile, skips);
}
