// Whether a name can be a branch: the one rule for every place a branch name from outside (a config, a
// forge's request, a promotion) becomes a ref path or a git argument.

/**
 * A name Git accepts for `refs/heads/<name>`, by the rules of `git check-ref-format --branch` that matter
 * once the name is a file path under refs/ or an argument: no empty, dot-led or `.lock` component, no `..`,
 * `//` or `@{`, no leading `-` (an option to git), no trailing `/` or `.`, no space, control character or
 * any of `~^:?*[\`. Every name it accepts, `git check-ref-format --branch` accepts too
 * (test/integration/git/branch-name.test.ts).
 */
export function isBranchName(name: string): boolean {
  return !(
    name === '' ||
    name.startsWith('/') ||
    name.endsWith('/') ||
    name.endsWith('.') ||
    name.startsWith('-') ||
    name.includes('..') ||
    name.includes('//') ||
    name.includes('@{') ||
    /[\s~^:?*[\\\p{Cc}]/u.test(name) ||
    name.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))
  );
}
