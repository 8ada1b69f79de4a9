// Tests for strategy.blueGreen: Argo's fields and defaults, and validate's blue-green checks at file:line.
import { describe, expect, it } from 'vitest';
import { blueGreenWithDefaults, blueGreenStrategySchema } from '../../../src/manifest/rollout.ts';
import { validateManifests } from '../../../src/manifest/validate.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

// ROLLOUT_YAML with its canary replaced by a blue-green block starting at line 23.
function blueGreenYaml(block: string): string {
  return ROLLOUT_YAML.replace(/ {2}strategy:[\s\S]*$/, `  strategy:\n    blueGreen:\n${block}`);
}

/** The errors `rollgate validate` reports for `text`, as `line:col path: message`. */
function blueGreenErrors(text: string): string[] {
  const report = validateManifests([{ file: 'rollout.yaml', text }]);
  return report.objects.flatMap((o) => o.errors.map((e) => `${e.line}:${e.col} ${e.path}: ${e.message}`));
}

describe('blueGreen defaults', () => {
  it("fills Argo's defaults and keeps what is set", () => {
    expect(blueGreenWithDefaults({ activeService: 'web' })).toEqual({
      activeService: 'web',
      autoPromotionEnabled: true,
      autoPromotionSeconds: 0,
      scaleDownDelaySeconds: 30,
      abortScaleDownDelaySeconds: 30,
    });
    expect(
      blueGreenWithDefaults({
        activeService: 'web',
        autoPromotionEnabled: false,
        scaleDownDelaySeconds: 0,
        abortScaleDownDelaySeconds: 5,
      }),
    ).toMatchObject({ autoPromotionEnabled: false, scaleDownDelaySeconds: 0, abortScaleDownDelaySeconds: 5 });
  });

  it('parses every Argo field', () => {
    const parsed = blueGreenStrategySchema.parse({
      activeService: 'web',
      previewService: 'web-preview',
      previewReplicaCount: 1,
      autoPromotionEnabled: false,
      autoPromotionSeconds: 0,
      maxUnavailable: 0,
      scaleDownDelaySeconds: 60,
      scaleDownDelayRevisionLimit: 2,
      abortScaleDownDelaySeconds: 10,
      prePromotionAnalysis: { templates: [{ templateName: 'smoke' }], args: [{ name: 'a', value: 'b' }] },
      postPromotionAnalysis: { templates: [{ templateName: 'soak' }] },
      antiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: { weight: 50 } },
      previewMetadata: { labels: { role: 'preview' } },
      activeMetadata: { labels: { role: 'active' } },
    });
    expect(parsed.previewReplicaCount).toBe(1);
    expect(parsed.postPromotionAnalysis?.templates).toEqual([{ templateName: 'soak' }]);
  });
});

describe('validate: blueGreen', () => {
  it('a well-formed blue-green block is valid', () => {
    expect(
      blueGreenErrors(
        blueGreenYaml(
          '      activeService: web\n      previewService: web-preview\n      previewReplicaCount: 1\n',
        ),
      ),
    ).toEqual([]);
  });

  it('activeService is required', () => {
    expect(blueGreenErrors(blueGreenYaml('      previewService: web-preview\n'))).toEqual([
      '23:5 spec.strategy.blueGreen.activeService: is required',
    ]);
  });

  it('previewService must differ from activeService', () => {
    expect(blueGreenErrors(blueGreenYaml('      activeService: web\n      previewService: web\n'))).toEqual([
      '25:7 spec.strategy.blueGreen.previewService: must differ from activeService (both are "web"): the preview would receive live traffic',
    ]);
  });

  it('previewReplicaCount at most replicas; scaleDownDelayRevisionLimit at most revisionHistoryLimit', () => {
    expect(
      blueGreenErrors(
        blueGreenYaml(
          '      activeService: web\n      previewReplicaCount: 4\n      scaleDownDelayRevisionLimit: 11\n',
        ),
      ),
    ).toEqual([
      '26:7 spec.strategy.blueGreen.scaleDownDelayRevisionLimit: must be at most revisionHistoryLimit (10), got 11',
      '25:7 spec.strategy.blueGreen.previewReplicaCount: must be at most spec.replicas (3), got 4',
    ]);
  });

  it('autoPromotionSeconds with autoPromotionEnabled false, and antiAffinity with both or a bad weight', () => {
    expect(
      blueGreenErrors(
        blueGreenYaml(
          [
            '      activeService: web',
            '      autoPromotionEnabled: false',
            '      autoPromotionSeconds: 30',
            '      antiAffinity:',
            '        preferredDuringSchedulingIgnoredDuringExecution: {weight: 0}',
            '        requiredDuringSchedulingIgnoredDuringExecution: {}',
            '',
          ].join('\n'),
        ),
      ),
    ).toEqual([
      '26:7 spec.strategy.blueGreen.autoPromotionSeconds: has no effect with autoPromotionEnabled: false (the rollout waits for `rollgate promote`); remove one of them',
      '27:7 spec.strategy.blueGreen.antiAffinity: must set exactly one of preferredDuringSchedulingIgnoredDuringExecution and requiredDuringSchedulingIgnoredDuringExecution',
      '28:59 spec.strategy.blueGreen.antiAffinity.preferredDuringSchedulingIgnoredDuringExecution.weight: must be between 1 and 100, got 0',
    ]);
  });

  it('pre- and post-promotion analyses need templates', () => {
    expect(
      blueGreenErrors(
        blueGreenYaml(
          '      activeService: web\n      prePromotionAnalysis: {}\n      postPromotionAnalysis:\n        templates: []\n',
        ),
      ),
    ).toEqual([
      '25:7 spec.strategy.blueGreen.prePromotionAnalysis.templates: must list at least one template',
      '27:9 spec.strategy.blueGreen.postPromotionAnalysis.templates: must list at least one template',
    ]);
  });

  it('the strategy is accepted: a blue-green Rollout with analyses is valid', () => {
    const report = validateManifests([
      {
        file: 'rollout.yaml',
        text: blueGreenYaml(
          [
            '      activeService: web',
            '      previewService: web-preview',
            '      autoPromotionEnabled: false',
            '      prePromotionAnalysis:',
            '        templates: [{templateName: smoke}]',
            '      postPromotionAnalysis:',
            '        templates: [{templateName: soak}]',
            '',
          ].join('\n'),
        ).replace(
          '  namespace: apps\n',
          '  namespace: apps\n  annotations: {rollgate.dev/expect-in-cluster: "smoke,soak"}\n',
        ),
      },
    ]);
    expect(report.objects[0]?.errors).toEqual([]);
    expect(report.objects[0]?.valid).toBe(true);
  });
});
