// Argo Rollouts' own end-to-end manifests (its test/e2e), read in place from a checkout of argoproj/argo-rollouts:
// every `expectedfailures/malformed-*.yaml` (objects the API server refuses) is refused by `rollgate validate`
// offline, at the line and field of the fault; the manifests Argo's suite applies are accepted, or refused only
// as `unsupported:` (features other issues track).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runValidate } from '../../../src/cli/commands/validate.ts';
import { parseManifests } from '../../../src/manifest/manifest.ts';
import type { ParsedManifests } from '../../../src/manifest/manifest.ts';
import { validateManifests, validateParsedManifests } from '../../../src/manifest/validate.ts';
import { argoRolloutsCheckout } from '../../support/argo-rollouts-checkout.ts';

const argo = argoRolloutsCheckout(
  import.meta.filename,
  "the tests that validate Argo Rollouts' e2e manifests",
);
const E2E = 'test/e2e/';

// Argo's kinds that `rollgate validate` skips today; each must still occur, or the entry goes.
const NOT_VALIDATED_KINDS: Record<string, string> = {};

// Manifests Argo's suite applies that Rollgate refuses with more than `unsupported:`, and why.
// (Istio's ping-pong manifest left this list: ping-pong is driven with ALB, and refused as `unsupported:` alone
// with other routers, without asking for the canaryService and stableService it replaces.)
const NOT_CHECKED: Record<string, string> = {};

// Templates Argo's suite fills in before applying them (RolloutTemplate in its Go tests): the same values here.
const TEMPLATE_VALUES: Record<string, Record<string, string>> = {
  'functional/nginx-template.yaml': { REPLACEME: 'set-canary-scale' },
  'functional/canary-duration-template.yaml': { ROLLOUT_NAME: 'canary-duration-start' },
  'functional/bluegreen-duration-template.yaml': { ROLLOUT_NAME: 'bluegreen-duration-start' },
  'step-plugin/template-rollout.yaml': { $$name$$: 'successful', $$phase$$: 'Successful' },
};

// Each file is read (one `git show`) and parsed once: a file is validated beside every analysis template.
const texts = new Map<string, string>();
function read(file: string): { file: string; text: string } {
  let text = texts.get(file);
  if (text === undefined) {
    text = argo.show(`${E2E}${file}`);
    for (const [from, to] of Object.entries(TEMPLATE_VALUES[file] ?? {})) text = text.split(from).join(to);
    texts.set(file, text);
  }
  return { file, text };
}
const parsedFiles = new Map<string, ParsedManifests>();
function parsed(file: string): ParsedManifests {
  const known = parsedFiles.get(file);
  if (known !== undefined) return known;
  const fresh = parseManifests(read(file).text, file);
  parsedFiles.set(file, fresh);
  return fresh;
}

const yaml = argo.missing
  ? []
  : argo
      .files(E2E)
      .map((path) => path.slice(E2E.length))
      .filter((file) => /\.ya?ml$/.test(file) && !file.startsWith('crds/'));
const malformed = yaml.filter((file) => /^expectedfailures\/malformed-[^/]*\.ya?ml$/.test(file));
// What Argo's suite applies and expects to work: everything but its expected failures.
const applied = yaml.filter((file) => !file.startsWith('expectedfailures/'));

interface Judgement {
  /** Refusals other than `unsupported:` (object, line:col, field, message). */
  refusals: string[];
  /** Argo kinds skipped as not validated (or a document that could not be read). */
  skippedKinds: string[];
  clean: number;
  unsupportedOnly: number;
}

// The lines of a malformed file that hold its fault: Argo marks each with `# invalid`.
function faultLines(text: string): number[] {
  return text.split('\n').flatMap((line, index) => (/#\s*invalid\b/.test(line) ? [index + 1] : []));
}

describe.skipIf(argo.missing)(
  "Argo Rollouts' expected failures (test/e2e/expectedfailures/malformed-*.yaml)",
  () => {
    it('finds them', () => {
      expect(malformed.length).toBeGreaterThanOrEqual(6);
    });

    it.each(malformed)('%s is refused at the line and field of each fault', (file) => {
      const { text } = read(file);
      const report = validateManifests([{ file, text }]);
      const kinds = parseManifests(text, file).objects.map((o) => o.kind);
      const unvalidated = kinds.filter((kind) => NOT_VALIDATED_KINDS[kind] !== undefined);
      if (unvalidated.length > 0) {
        // Listed above: skipped as a kind Rollgate does not handle, until its validation lands.
        expect(report.skipped.map((s) => s.kind)).toEqual(unvalidated);
        expect(report.objects).toEqual([]);
        return;
      }
      expect(report.objects.length).toBeGreaterThan(0);
      expect(report.summary.valid).toBe(0);
      const faults = faultLines(text);
      expect(faults.length).toBeGreaterThan(0);
      const errors = report.objects.flatMap((o) => o.errors);
      for (const line of faults) {
        const field = text.split('\n')[line - 1]!.trim().split(':')[0]!;
        const atLine = errors.filter((e) => e.line === line);
        expect(atLine.map((e) => `${e.path}: ${e.message}`)).toEqual([
          expect.stringMatching(new RegExp(`\\.resources\\.requests\\.${field}: invalid quantity "invalid"`)),
        ]);
      }
    });

    describe('through `rollgate validate`', () => {
      let dir = '';
      beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'rollgate-argo-e2e-'));
        for (const file of malformed) {
          mkdirSync(join(dir, dirname(file)), { recursive: true });
          writeFileSync(join(dir, file), read(file).text);
        }
      });
      afterAll(() => rmSync(dir, { recursive: true, force: true }));

      it('exits 1 and prints file:line:col, the object and the field of each quantity that does not parse', async () => {
        let stdout = '';
        const previous = process.cwd();
        process.chdir(dir);
        let code: number;
        try {
          code = await runValidate(
            ['expectedfailures'],
            { output: 'text', render: 'plain' },
            { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined } },
          );
        } finally {
          process.chdir(previous);
        }
        expect(code).toBe(1);
        expect(stdout).toContain(
          'expectedfailures/malformed-rollout.yaml:19:13: Rollout/malformed-rollout: spec.template.spec.containers[0].resources.requests.memory: invalid quantity "invalid"',
        );
        expect(stdout).toContain(
          'expectedfailures/malformed-analysistemplate.yaml:18:21: AnalysisTemplate/malformed-analysis: spec.metrics[0].provider.job.spec.template.spec.containers[0].resources.requests.memory: invalid quantity "invalid"',
        );
      });
    });
  },
);

describe.skipIf(argo.missing)(
  "the manifests Argo Rollouts' e2e suite applies (test/e2e, not expectedfailures)",
  () => {
    // Argo's suite applies the analysis templates a test needs before its Rollout: they are validated together.
    const templates = applied.filter((file) =>
      parsed(file).objects.some((o) => ['AnalysisTemplate', 'ClusterAnalysisTemplate'].includes(o.kind)),
    );
    const checked = applied.filter((file) => NOT_CHECKED[file] === undefined);

    /** What validating one file finds: refusals other than `unsupported:`, skipped Argo kinds, objects by outcome. */
    const judged = new Map<string, Judgement>();
    function judge(file: string): Judgement {
      const known = judged.get(file);
      if (known !== undefined) return known;
      const context = templates.filter((other) => other !== file).map(parsed);
      const report = validateParsedManifests([parsed(file), ...context]);
      const skippedKinds = report.skipped
        .filter(
          (s) => s.file === file && (s.kind === null || s.apiVersion?.startsWith('argoproj.io/') === true),
        )
        .map((s) => s.kind ?? `unreadable document at line ${s.line}: ${s.reason}`);
      const mine = report.objects.filter((o) => o.file === file);
      const refusals = mine.flatMap((o) =>
        o.errors
          .filter((e) => !e.message.startsWith('unsupported: '))
          .map((e) => `${o.kind}/${o.name} ${e.line}:${e.col} ${e.path}: ${e.message}`),
      );
      const judgement: Judgement = {
        refusals,
        skippedKinds,
        clean: mine.filter((o) => o.valid).length,
        unsupportedOnly: mine.filter((o) => !o.valid).length,
      };
      judged.set(file, judgement);
      return judgement;
    }

    it.each(checked)('%s is accepted, or refused only as unsupported', (file) => {
      const { refusals, skippedKinds } = judge(file);
      expect(refusals).toEqual([]);
      for (const kind of skippedKinds) expect(NOT_VALIDATED_KINDS, `${file}: ${kind}`).toHaveProperty(kind);
    });

    it('the lists above are honest: every entry still applies, and most objects validate clean', () => {
      const all = checked.map(judge);
      const kindsMet = new Set(all.flatMap((j) => j.skippedKinds));
      const counts = {
        clean: all.reduce((sum, j) => sum + j.clean, 0),
        unsupportedOnly: all.reduce((sum, j) => sum + j.unsupportedOnly, 0),
      };
      expect([...kindsMet].sort()).toEqual(Object.keys(NOT_VALIDATED_KINDS).sort());
      for (const file of Object.keys(NOT_CHECKED)) {
        expect(applied).toContain(file);
        const report = validateManifests([read(file)]);
        expect(
          report.objects.flatMap((o) => o.errors).some((e) => !e.message.startsWith('unsupported: ')),
        ).toBe(true);
      }
      for (const file of Object.keys(TEMPLATE_VALUES)) expect(applied).toContain(file);
      expect(counts.clean).toBeGreaterThanOrEqual(30);
      expect(counts.unsupportedOnly).toBeGreaterThan(0);
    });
  },
);
