// `rollgate create analysisrun` flags: one template source, NAME=VALUE arguments, a name or a prefix.
import { describe, expect, it } from 'vitest';
import { parseCreateAnalysisRunFlags } from '../../../src/cli/create-analysis-run-flags.ts';

describe('parseCreateAnalysisRunFlags', () => {
  it.each([
    {
      name: '--from reads an AnalysisTemplate, named after it by the API server',
      flags: { from: 'rate' },
      want: { template: { kind: 'AnalysisTemplate', name: 'rate' }, args: [] },
    },
    {
      name: '--global --from reads a ClusterAnalysisTemplate',
      flags: { from: 'rate', global: true },
      want: { template: { kind: 'ClusterAnalysisTemplate', name: 'rate' }, args: [] },
    },
    {
      name: '--from-cluster-template is --global --from',
      flags: { fromClusterTemplate: 'rate' },
      want: { template: { kind: 'ClusterAnalysisTemplate', name: 'rate' }, args: [] },
    },
    {
      name: '--from-file keeps --global for the kind the file must hold',
      flags: { fromFile: 't.yaml', global: true, name: 'r1' },
      want: { template: { kind: 'file', path: 't.yaml', global: true }, args: [], naming: { name: 'r1' } },
    },
    {
      name: 'arguments split at the first =, so a value may hold one',
      flags: { from: 't', argument: ['host=svc', 'query=a=b', 'empty='], generateName: 'check-' },
      want: {
        template: { kind: 'AnalysisTemplate', name: 't' },
        args: [
          { name: 'host', value: 'svc' },
          { name: 'query', value: 'a=b' },
          { name: 'empty', value: '' },
        ],
        naming: { generateName: 'check-' },
      },
    },
  ])('$name', ({ flags, want }) => {
    expect(parseCreateAnalysisRunFlags(flags)).toEqual(want);
  });

  it.each([
    { flags: {}, error: 'give exactly one of --from, --from-file or --from-cluster-template' },
    { flags: { from: 'a', fromFile: 'b' }, error: 'give exactly one of' },
    { flags: { from: 'a', argument: ['novalue'] }, error: '--argument "novalue" must be NAME=VALUE' },
    { flags: { from: 'a', argument: ['=x'] }, error: '--argument "=x" must be NAME=VALUE' },
    {
      flags: { from: 'a', name: 'n', generateName: 'g-' },
      error: 'give --name or --generate-name, not both',
    },
  ])('refuses $flags', ({ flags, error }) => {
    expect(parseCreateAnalysisRunFlags(flags)).toContain(error);
  });
});
