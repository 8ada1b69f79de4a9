// Semantic checks on a Fleet whose shape is valid: waves that resolve, a soak that parses, one rule per field.
import { parseDuration } from './duration.ts';
import type { FieldPath } from './field-path.ts';
import type { FleetSpec } from './fleet.ts';
import { dnsSubdomainProblem } from './kube-names.ts';
import type { IssueCollector } from './validation-issue.ts';

/** One problem in a Fleet, at its field; the controller shows these in the Invalid condition. */
export interface FleetProblem {
  path: FieldPath;
  message: string;
}

/**
 * What is wrong with a Fleet's spec past its shape: each wave names exactly one of clusters, percent or
 * rest; wave names are unique; `rest` is the last wave; a cluster is in at most one wave and, when
 * `spec.clusters` is given, is one of them; an explicit wave is not empty; the soak parses.
 */
export function fleetSpecProblems(spec: FleetSpec): FleetProblem[] {
  const problems: FleetProblem[] = [];
  const at = (...rest: Array<string | number>): FieldPath => ['spec', ...rest];
  const fleetClusters = spec.clusters === undefined ? undefined : new Set(spec.clusters);
  const seenClusters = new Map<string, number>();
  (spec.clusters ?? []).forEach((name, index) => {
    if (spec.clusters!.indexOf(name) !== index)
      problems.push({ path: at('clusters', index), message: `repeats cluster ${JSON.stringify(name)}` });
  });
  const waveNames = new Set<string>();
  spec.waves.forEach((wave, index) => {
    const w = (...rest: Array<string | number>): FieldPath => at('waves', index, ...rest);
    if (waveNames.has(wave.name))
      problems.push({ path: w('name'), message: `repeats wave name ${JSON.stringify(wave.name)}` });
    waveNames.add(wave.name);
    const kinds = [wave.clusters !== undefined, wave.percent !== undefined, wave.rest === true].filter(
      Boolean,
    ).length;
    if (kinds !== 1)
      problems.push({
        path: w(),
        message: 'must name exactly one of clusters, percent or rest: true',
      });
    if (wave.rest === true && index !== spec.waves.length - 1)
      problems.push({ path: w('rest'), message: 'only the last wave may take the rest' });
    if (wave.clusters !== undefined && wave.clusters.length === 0)
      problems.push({ path: w('clusters'), message: 'is empty: a wave needs at least one cluster' });
    (wave.clusters ?? []).forEach((name, clusterIndex) => {
      const earlier = seenClusters.get(name);
      if (earlier !== undefined)
        problems.push({
          path: w('clusters', clusterIndex),
          message: `cluster ${JSON.stringify(name)} is already in wave ${earlier} (${JSON.stringify(spec.waves[earlier]!.name)})`,
        });
      else seenClusters.set(name, index);
      if (fleetClusters !== undefined && !fleetClusters.has(name))
        problems.push({
          path: w('clusters', clusterIndex),
          message: `cluster ${JSON.stringify(name)} is not one of spec.clusters`,
        });
    });
  });
  if (spec.gates?.soak !== undefined) {
    try {
      parseDuration(spec.gates.soak);
    } catch (err) {
      problems.push({ path: at('gates', 'soak'), message: err instanceof Error ? err.message : String(err) });
    }
  }
  return problems;
}

/** The Fleet checks past its shape, written to a validation sink (file/line/field). */
export function checkFleet(
  fleet: { metadata: { name: string }; spec: FleetSpec },
  sink: IssueCollector,
): void {
  const nameProblem = dnsSubdomainProblem(fleet.metadata.name);
  if (nameProblem !== undefined) sink.error(['metadata', 'name'], nameProblem);
  for (const problem of fleetSpecProblems(fleet.spec)) sink.error(problem.path, problem.message);
}
