// Sub-step: each template's ReplicaSet (and Service) created, scaled or scaled down, and its status assessed.
import type { ExperimentTemplate, TemplateStatus, TemplateStatusCode } from '../manifest/experiment.ts';
import { SCALE_DOWN_DEADLINE_ANNOTATION } from '../rollout/rollout-action.ts';
import { deadlineValue, parseDeadline } from '../rollout/plan-scale-down.ts';
import type { ExperimentAction, ExperimentEventAction } from './experiment-action.ts';
import {
  desiredReplicas,
  isCompletedTemplateStatus,
  passedDuration,
  progressDeadlineSecondsOf,
  scaleDownDelaySecondsOf,
} from './experiment-lifecycle.ts';
import { amendExperimentPass, type ExperimentPass, type ExperimentSubStep } from './experiment-pass.ts';
import type { ObservedTemplateReplicaSet } from './observed-experiment.ts';
import { templateReplicaSet } from './template-replica-set.ts';

interface TemplateOutcome {
  status: TemplateStatus;
  actions: ExperimentAction[];
  events: ExperimentEventAction[];
  wakeAtMs: Array<number | undefined>;
}

function emptyStatus(name: string): TemplateStatus {
  return { name, replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0 };
}

/** The Service actions of a template whose ReplicaSet exists (Argo: created while pods are wanted, removed once none is available). */
function serviceActions(
  pass: ExperimentPass,
  template: ExperimentTemplate,
  rs: ObservedTemplateReplicaSet,
  desired: number,
  status: TemplateStatus,
): { actions: ExperimentAction[]; status: TemplateStatus } {
  const observed = pass.context.observed.services.find((svc) => svc.templateName === template.name);
  if (template.service !== undefined && desired !== 0) {
    const name = template.service.name || rs.name;
    if (observed !== undefined || rs.ports.length === 0) return { actions: [], status };
    return {
      actions: [
        {
          kind: 'createService',
          template: template.name,
          name,
          selector: rs.labels,
          labels: rs.labels,
          ports: rs.ports.map((port) => ({
            ...(port.name !== undefined && { name: port.name }),
            port: port.containerPort,
            targetPort: port.containerPort,
            protocol: port.protocol ?? 'TCP',
          })),
        },
      ],
      status: { ...status, serviceName: name, podTemplateHash: rs.podTemplateHash },
    };
  }
  // Kept while pods still serve (the scale-down delay), then removed with its status fields.
  if (observed === undefined || (template.service !== undefined && rs.status.availableReplicas > 0))
    return { actions: [], status };
  const { serviceName: _name, podTemplateHash: _hash, ...rest } = status;
  return { actions: [{ kind: 'deleteService', template: template.name, name: observed.name }], status: rest };
}

/** The scale (or deadline annotation) a template's existing ReplicaSet needs, and when to look again. */
function scaleActions(
  pass: ExperimentPass,
  template: ExperimentTemplate,
  rs: ObservedTemplateReplicaSet,
  desired: number,
): { actions: ExperimentAction[]; wakeAtMs?: number; scaled: boolean } {
  const now = pass.context.now.getTime();
  const base = {
    kind: 'scaleReplicaSet',
    template: template.name,
    name: rs.name,
    resourceVersion: rs.resourceVersion,
  } as const;
  if (desired > 0) {
    if (rs.replicas === desired) return { actions: [], scaled: false };
    const annotations =
      SCALE_DOWN_DEADLINE_ANNOTATION in rs.annotations
        ? { [SCALE_DOWN_DEADLINE_ANNOTATION]: null }
        : undefined;
    return { actions: [{ ...base, replicas: desired, ...(annotations && { annotations }) }], scaled: true };
  }
  if (rs.replicas === 0) return { actions: [], scaled: false };
  const delayMs = scaleDownDelaySecondsOf(pass.context.experiment) * 1000;
  const deadline = parseDeadline(rs.annotations[SCALE_DOWN_DEADLINE_ANNOTATION]);
  if (delayMs > 0 && deadline === undefined) {
    // First the deadline, in its own write (a missing or unreadable one is written afresh), then the scale.
    const at = now + delayMs;
    return {
      actions: [
        {
          ...base,
          replicas: rs.replicas,
          annotations: { [SCALE_DOWN_DEADLINE_ANNOTATION]: deadlineValue(rs.name, at) },
        },
      ],
      wakeAtMs: at,
      scaled: false,
    };
  }
  if (delayMs > 0 && deadline !== undefined && deadline > now)
    return { actions: [], wakeAtMs: deadline, scaled: false };
  return { actions: [{ ...base, replicas: 0 }], scaled: true };
}

function reconcileTemplate(
  pass: ExperimentPass,
  template: ExperimentTemplate,
  collisionCount?: number,
): TemplateOutcome {
  const { experiment, observed, now, terminating } = pass.context;
  const live = experiment.status?.templateStatuses?.find((t) => t.name === template.name);
  const previous = live ?? emptyStatus(template.name);
  let status: TemplateStatus = { ...previous };
  const desired = desiredReplicas(template, terminating, previous.status);
  const rs = observed.replicaSets.find((candidate) => candidate.templateName === template.name);
  const actions: ExperimentAction[] = [];
  const wakeAtMs: Array<number | undefined> = [];
  const stamp = now.toISOString();

  if (rs === undefined) {
    // A template that ended before its ReplicaSet existed gets none.
    if (desired > 0) {
      actions.push(templateReplicaSet(experiment.metadata.name, template, desired, collisionCount));
      status.lastTransitionTime = stamp;
    }
    status = { ...status, replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0 };
  } else {
    const service = serviceActions(pass, template, rs, desired, status);
    actions.push(...service.actions);
    status = service.status;
    const scale = scaleActions(pass, template, rs, desired);
    actions.push(...scale.actions);
    wakeAtMs.push(scale.wakeAtMs);
    if (scale.scaled) status.lastTransitionTime = stamp;
    status = {
      ...status,
      replicas: rs.status.replicas,
      updatedReplicas: rs.status.replicas,
      readyReplicas: rs.status.readyReplicas,
      availableReplicas: rs.status.availableReplicas,
    };
  }
  const counted = (['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas'] as const).some(
    (field) => status[field] !== previous[field],
  );
  if (counted) status.lastTransitionTime = stamp;

  if (!isCompletedTemplateStatus(previous.status)) {
    let code: TemplateStatusCode;
    if (desired === status.availableReplicas) {
      code =
        passedDuration(experiment, experiment.status?.availableAt, now) || terminating
          ? 'Successful'
          : 'Running';
    } else {
      const deadlineSeconds = progressDeadlineSecondsOf(experiment);
      const from = Date.parse(status.lastTransitionTime ?? stamp);
      const deadline = (Number.isNaN(from) ? now.getTime() : from) + deadlineSeconds * 1000;
      if (now.getTime() > deadline) {
        code = 'Failed';
        status.message = `Template '${template.name}' exceeded its progressDeadlineSeconds (${deadlineSeconds})`;
      } else if (terminating) {
        code = 'Successful';
      } else {
        code = 'Progressing';
        // Looked at again just after the deadline: it is only exceeded once passed.
        wakeAtMs.push(deadline + 1);
      }
    }
    status.status = code;
  }

  const events: ExperimentEventAction[] = [];
  if (previous.status !== status.status) {
    const detail = status.message ? `: ${status.message}` : '';
    events.push({
      kind: 'emitEvent',
      type: status.status === 'Failed' || status.status === 'Error' ? 'Warning' : 'Normal',
      reason: `Template${status.status ?? ''}`,
      message: `Template '${template.name}' transitioned from ${previous.status ?? ''} -> ${status.status ?? ''}${detail}`,
    });
  }
  return { status, actions, events, wakeAtMs };
}

/** Every template in spec order: its ReplicaSet's actions, its next status and the events of its transition. */
export const reconcileTemplates: ExperimentSubStep = {
  name: 'reconcileTemplates',
  run: (pass) => {
    const outcomes = pass.context.experiment.spec.templates.map((template) => {
      const collision = pass.context.experiment.status?.templateStatuses?.find(
        (t) => t.name === template.name,
      )?.collisionCount;
      return reconcileTemplate(pass, template, collision);
    });
    return amendExperimentPass(pass, {
      status: { templateStatuses: outcomes.map((o) => o.status) },
      actions: outcomes.flatMap((o) => o.actions),
      events: outcomes.flatMap((o) => o.events),
      wakeAtMs: outcomes.flatMap((o) => o.wakeAtMs),
    });
  },
};
