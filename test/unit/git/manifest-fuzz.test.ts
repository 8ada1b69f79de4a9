// Hostile manifest text (mutated bytes, swapped values, hostile keys): the parser and the diff never throw,
// every problem names the file, a line and a message, and nothing leaks onto Object.prototype.
import { describe, expect, it } from 'vitest';
import { compareManifests, parseFileChange } from '../../../src/git/manifest-diff.ts';
import { specManifestParser } from '../../../src/git/manifest-parser.ts';
// mulberry32, seeded, so a failing case reproduces.
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';
import { ROLLOUT_YAML } from '../../builders/rollout-manifest.ts';

const ANALYSIS_TEMPLATE_YAML = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: success-rate
  namespace: apps
spec:
  args:
    - name: service
  metrics:
    - name: success-rate
      interval: 1m
      successCondition: result[0] >= 0.95
      provider:
        web:
          url: "http://metrics.apps.svc/rate?service={{args.service}}"
          headers:
            - key: Accept
              value: application/json
`;

const SERVICE_YAML = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: apps
spec:
  ports:
    - port: 80
  selector:
    app: web
`;

const SEEDS = [ROLLOUT_YAML, ANALYSIS_TEMPLATE_YAML, SERVICE_YAML];

// Values a writer of a followed repository can put in any field.
const HOSTILE_VALUES = [
  '~',
  '[]',
  '{}',
  '-1',
  '1e308',
  '.nan',
  '0x7fffffffffffffff',
  '"a\\r\\nInjected: header"',
  '"../../etc/passwd"',
  '"\\u0000"',
  '{__proto__: {polluted: yes}}',
  '{constructor: {prototype: {polluted: yes}}}',
  '&a [*a, *a]',
  '*undefined_alias',
  '!!binary aGVsbG8=',
  '!custom tag',
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
  `"${'x'.repeat(5000)}"`,
  '|\n    a block',
  '? complex key\n  : value',
];

// Byte-level pieces that break YAML structure in many ways.
const HOSTILE_PIECES = [
  '\t',
  ':',
  '- ',
  '---\n',
  '...\n',
  '"',
  "'",
  '{',
  '}',
  '[',
  ']',
  '&x ',
  '*x',
  '%YAML 1.1\n',
  '\r',
  '\u0000',
  '\uFEFF',
  '#',
  '!',
  '|',
  '>',
];

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  const item = items[Math.floor(random.next() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

// Replaces the value of one `key: value` line with a hostile value.
function swapValue(random: SeededRandom, text: string): string {
  const lines = text.split('\n');
  const candidates = lines.flatMap((line, index) => (/^\s*-?\s*[\w.]+:\s*\S/.test(line) ? [index] : []));
  if (candidates.length === 0) return text;
  const index = pick(random, candidates);
  const line = lines[index] ?? '';
  lines[index] = line.replace(/:\s*\S.*$/, `: ${pick(random, HOSTILE_VALUES)}`);
  return lines.join('\n');
}

// Inserts, deletes or duplicates a random stretch of characters.
function mutateBytes(random: SeededRandom, text: string): string {
  const at = Math.floor(random.next() * (text.length + 1));
  const roll = random.next();
  if (roll < 0.4) return text.slice(0, at) + pick(random, HOSTILE_PIECES) + text.slice(at);
  if (roll < 0.7) return text.slice(0, at) + text.slice(at + 1 + Math.floor(random.next() * 20));
  const end = Math.min(text.length, at + Math.floor(random.next() * 40));
  return text.slice(0, end) + text.slice(at, end) + text.slice(end);
}

function hostileManifest(random: SeededRandom): string {
  let text = pick(random, SEEDS);
  const edits = 1 + Math.floor(random.next() * 4);
  for (let i = 0; i < edits; i++)
    text = random.chance(0.5) ? swapValue(random, text) : mutateBytes(random, text);
  if (random.chance(0.2)) text = `${text}\n---\n${pick(random, SEEDS)}`;
  return text;
}

describe('manifest parsing under hostile input', () => {
  it('never throws; each problem names the file, a line and a message; nothing reaches Object.prototype', () => {
    const random = new SeededRandom(0x5eed_2026);
    let problems = 0;
    let objects = 0;
    for (let trial = 0; trial < 1500; trial++) {
      const before = pick(random, SEEDS);
      const after = hostileManifest(random);
      const context = `trial ${trial}:\n${after}`;
      let parsed: ReturnType<typeof parseFileChange> | undefined;
      expect(() => {
        parsed = parseFileChange({ path: 'apps/web.yaml', before, after }, specManifestParser);
        compareManifests([parsed]);
      }, context).not.toThrow();
      for (const problem of parsed?.after?.problems ?? []) {
        expect(problem.file, context).toBe('apps/web.yaml');
        expect(problem.line, context).toBeGreaterThanOrEqual(1);
        expect(problem.message.trim(), context).not.toBe('');
      }
      problems += parsed?.after?.problems.length ?? 0;
      objects += parsed?.after?.objects.length ?? 0;
      expect(({} as Record<string, unknown>).polluted, context).toBeUndefined();
    }
    // The mutations reach both outcomes: a fuzz run that only ever produced problems (or none) tests little.
    expect(problems).toBeGreaterThan(300);
    expect(objects).toBeGreaterThan(300);
  });
});
