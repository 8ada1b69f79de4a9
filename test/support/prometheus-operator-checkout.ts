// The Prometheus Operator's CRDs (ServiceMonitor, PrometheusRule), read at test time from a checkout of
// prometheus-operator/prometheus-operator beside this repository, never copied in: the schemas
// deploy/components/monitoring must satisfy. ROLLGATE_PROMETHEUS_OPERATOR_REPO names the checkout; otherwise it
// is found beside the repository as upstream-checkout.ts says. Without one, the tests that read it skip, each
// file saying so in one line; ROLLGATE_REQUIRE_PROMETHEUS_OPERATOR=1 (set by .ci/run when it finds one) makes
// that a failure.
import { upstreamCheckout } from './upstream-checkout.ts';
import type { UpstreamCheckout, UpstreamRepository } from './upstream-checkout.ts';

const PROMETHEUS_OPERATOR: UpstreamRepository = {
  github: 'prometheus-operator/prometheus-operator',
  repoEnv: 'ROLLGATE_PROMETHEUS_OPERATOR_REPO',
  requireEnv: 'ROLLGATE_REQUIRE_PROMETHEUS_OPERATOR',
};

/** Where the operator keeps its generated CRDs. */
export const PROMETHEUS_OPERATOR_CRDS = 'example/prometheus-operator-crd';

/** The prometheus-operator checkout for the test file `testFile` (the caller's `import.meta.filename`). */
export function prometheusOperatorCheckout(testFile: string, skips: string): UpstreamCheckout {
  return upstreamCheckout(PROMETHEUS_OPERATOR, testFile, skips);
}
