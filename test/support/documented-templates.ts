// What the provider validation tests read: `rollgate validate`'s report of one manifest as lines, and the
// AnalysisTemplates of an Argo docs page (read in place from the argo-rollouts checkout).
import { validateManifests } from '../../src/manifest/validate.ts';
import type { UpstreamCheckout } from './upstream-checkout.ts';

/** `rollgate validate` on one file: errors as `file:line:col path: message`, warnings, the kinds read. */
export function validateOne(text: string, file = 'template.yaml') {
  const report = validateManifests([{ file, text }]);
  return {
    errors: report.objects.flatMap((o) =>
      o.errors.map((e) => `${o.file}:${e.line}:${e.col} ${e.path}: ${e.message}`),
    ),
    warnings: report.objects.flatMap((o) => o.warnings.map((e) => `${e.line} ${e.path}: ${e.message}`)),
    kinds: report.objects.map((o) => o.kind),
  };
}

/** The complete AnalysisTemplates in a docs page's yaml blocks (not the `...<snip>` fragments). */
export function documentedTemplates(checkout: UpstreamCheckout, page: string): string[] {
  return [...checkout.show(page).matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .filter((block) => block.includes('kind: AnalysisTemplate') && !block.includes('<snip>'));
}
