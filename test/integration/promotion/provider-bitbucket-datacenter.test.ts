// The promotion essentials on Bitbucket Data Center (a row of the provider suite): PR with a green status, merge through the API
// and the forge's own webhook, auto-merge waiting for the CI status on the head; on the forge double's real repositories.
import { runProviderPromotion } from '../../support/provider-promotion.ts';

runProviderPromotion(['bitbucket-datacenter'], { autoMerge: true });
