// Reads a kustomization file: every path it names, with the line it is written on (nothing is rendered here).
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Node as YamlNode, YAMLMap } from 'yaml';
import type { RenderProblem } from '../render-problem.ts';

/** The names kustomize looks for in a directory, in its order. */
export const KUSTOMIZATION_FILE_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/**
 * One path a kustomization names. `entry`: a resource, base, component, transformer, generator or
 * validator, which may be a directory (another kustomization) or a file; `file`: a file only.
 */
export interface KustomizationReference {
  /** The field it is written in (`resources`, `configMapGenerator.files`, `patches.path`…). */
  field: string;
  path: string;
  line: number;
  kind: 'entry' | 'file';
}

/** A kustomization file, read: what it names, and what it asks that Rollgate refuses (with lines). */
export interface KustomizationFile {
  references: KustomizationReference[];
  /** Invalid YAML, a file that is not a mapping, Helm inflation. */
  problems: RenderProblem[];
}

/** Lists of paths that may name a directory holding a kustomization. */
const ENTRY_LISTS = ['resources', 'bases', 'components', 'transformers', 'generators', 'validators'];
/** Lists of files. */
const FILE_LISTS = ['configurations', 'crds'];
/** Lists of objects each naming a file in `path`. */
const PATH_OBJECT_LISTS = ['patches', 'patchesJson6902', 'replacements'];
/** Keys kustomize inflates Helm charts with (which would need `--enable-helm` and a helm binary). */
const HELM_KEYS = ['helmCharts', 'helmGlobals', 'helmChartInflationGenerator'];

/**
 * What a kustomization file names, read with its lines. An inline entry (a patch or a transformer
 * configuration written as YAML text in the list) names no file and is skipped.
 */
export function readKustomizationFile(file: string, text: string): KustomizationFile {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: false });
  const lineOf = (node: YamlNode | null | undefined): number =>
    node?.range ? lineCounter.linePos(node.range[0]).line : 1;
  const result: KustomizationFile = { references: [], problems: [] };
  const first = document.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0]?.line ?? 1;
    result.problems.push({ file, line, message: `invalid YAML: ${first.message.split('\n')[0] ?? ''}` });
    return result;
  }
  const root = document.contents;
  if (root === null || root === undefined) return result;
  if (!isMap(root)) {
    result.problems.push({ file, line: lineOf(root), message: 'a kustomization must be a mapping' });
    return result;
  }
  const add = (field: string, node: unknown, kind: KustomizationReference['kind']): void => {
    if (!isScalar(node) || typeof node.value !== 'string') return;
    const path = node.value.trim();
    // YAML text in the list (an inline patch or plugin configuration) rather than a path.
    if (path === '' || path.includes('\n')) return;
    result.references.push({ field, path, line: lineOf(node), kind });
  };
  const items = (node: unknown): unknown[] => (isSeq(node) ? node.items : []);
  const field = (map: unknown, key: string): unknown => (isMap(map) ? map.get(key, true) : undefined);

  for (const pair of (root as YAMLMap).items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = pair.value;
    if (HELM_KEYS.includes(key)) {
      result.problems.push({
        file,
        line: lineOf(pair.key as YamlNode),
        message:
          `${key}: Rollgate does not inflate Helm charts in a kustomization (no --enable-helm); ` +
          'render the chart in CI into a folder Rollgate follows (docs/helm.md), or let Argo CD or Flux ' +
          'render it and run Rollgate in controller mode',
      });
    } else if (ENTRY_LISTS.includes(key)) {
      for (const item of items(value)) add(key, item, 'entry');
    } else if (FILE_LISTS.includes(key) || key === 'patchesStrategicMerge') {
      for (const item of items(value)) add(key, item, 'file');
    } else if (PATH_OBJECT_LISTS.includes(key)) {
      for (const item of items(value)) add(`${key}.path`, field(item, 'path'), 'file');
    } else if (key === 'openapi') {
      add('openapi.path', field(value, 'path'), 'file');
    } else if (key === 'configMapGenerator' || key === 'secretGenerator') {
      for (const generator of items(value)) {
        for (const source of items(field(generator, 'files'))) {
          // `[key=]path`: the key is the data key, the rest the file.
          if (isScalar(source) && typeof source.value === 'string') {
            const path = source.value.slice(source.value.indexOf('=') + 1);
            result.references.push({ field: `${key}.files`, path, line: lineOf(source), kind: 'file' });
          }
        }
        for (const env of items(field(generator, 'envs'))) add(`${key}.envs`, env, 'file');
        add(`${key}.env`, field(generator, 'env'), 'file');
      }
    }
  }
  return result;
}
