// One row per forge provider: a new forge is a new module and a row here.
import { AzureDevOpsForge } from './azure-devops-forge.ts';
import { BitbucketCloudForge } from './bitbucket-cloud-forge.ts';
import { BitbucketDataCenterForge } from './bitbucket-datacenter-forge.ts';
import type { Forge, ForgeOptions, ForgeProvider } from './forge.ts';
import { GiteaForge } from './gitea-forge.ts';
import { GitHubForge } from './github-forge.ts';
import { GitLabForge } from './gitlab-forge.ts';

const FORGES: Record<ForgeProvider, (options: ForgeOptions) => Forge> = {
  github: (options) => new GitHubForge(options),
  gitlab: (options) => new GitLabForge(options),
  gitea: (options) => new GiteaForge(options),
  'bitbucket-cloud': (options) => new BitbucketCloudForge(options),
  'bitbucket-datacenter': (options) => new BitbucketDataCenterForge(options),
  'azure-devops': (options) => new AzureDevOpsForge(options),
};

/** The forge client for `options.provider`. */
export function createForge(options: ForgeOptions): Forge {
  return FORGES[options.provider](options);
}
