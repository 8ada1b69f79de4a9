// An Experiment analysis's args with `{{templates.NAME.podTemplateHash}}` / `{{templates.NAME.replicaset.name}}` filled in (pure).
import type { Argument } from '../manifest/analysis.ts';
import { TEMPLATE_REFERENCE } from '../manifest/experiment-checks.ts';
import type { ObservedTemplateReplicaSet } from './observed-experiment.ts';

/** The args with every template reference replaced; throws Error naming the template when its ReplicaSet is unknown. */
export function resolveTemplateArguments(
  args: readonly Argument[],
  replicaSets: readonly ObservedTemplateReplicaSet[],
): Argument[] {
  return args.map((arg) => {
    if (arg.value === undefined) return arg;
    const value = arg.value.replace(TEMPLATE_REFERENCE, (_whole, name: string, field: string) => {
      const rs = replicaSets.find((candidate) => candidate.templateName === name);
      if (rs === undefined)
        throw new Error(
          `arg ${JSON.stringify(arg.name)}: template ${JSON.stringify(name)} has no ReplicaSet`,
        );
      return field === 'podTemplateHash' ? rs.podTemplateHash : rs.name;
    });
    return { ...arg, value };
  });
}
