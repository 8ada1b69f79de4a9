// One row per forge provider: a new forge is a new module and a row here.
import type { Forge, ForgeOptions, ForgeProvider } from './forge.ts';
import { GiteaForge } from './gitea-forge.ts';
import { GitHubForge } from './github-forge.ts';
import { GitLabForge } from './gitlab-forge.ts';

const FORGES: Record<ForgeProvider, (options: ForgeOptions) => Forge> = {
  github: (options) => new GitHubForge(options),
  gitlab: (options) => new GitLabForge(options),
  gitea: (options) => new GiteaForge(options),
};

/** The forge client for `options.provider`. */
export function createForge(options: ForgeOptions): Forge {
  return FORGES[options.provider](options);
}
