// The analysis module's public surface: build, plan and reconcile AnalysisRuns; conditions; providers.
export { buildAnalysisRun, objectArgumentResolver, resolveMetricSecrets } from './build-analysis-run.ts';
export type {
  AnalysisArgumentInput,
  AnalysisRunOwnerReference,
  AnalysisRunTarget,
  ArgumentResolver,
  SecretResolver,
} from './build-analysis-run.ts';
export { planAnalysisRun, assessMetric } from './plan-analysis-run.ts';
export type { AnalysisRunPlan } from './plan-analysis-run.ts';
export { recordMeasurement } from './record-measurement.ts';
export { evaluateMeasurement, compileMetricConditions } from './evaluate-measurement.ts';
export type { MeasurementVerdict } from './evaluate-measurement.ts';
export { reconcileAnalysisRun } from './run-executor.ts';
export type { AnalysisRunDeps, AnalysisRunOutcome } from './run-executor.ts';
export { checkAnalysisTemplate } from './check-analysis-template.ts';
export type { AnalysisTemplateIssue } from './check-analysis-template.ts';
export { isCompletedPhase, isWorsePhase } from './analysis-phase.ts';
export { metricSettings } from './metric-settings.ts';
export { DEFAULT_MEASUREMENT_RETENTION } from './measurement-retention.ts';
export { compileExpression, evaluateCondition } from './expression/compile-expression.ts';
export type { CompiledExpression } from './expression/compile-expression.ts';
export { ExpressionSyntaxError } from './expression/expression-syntax-error.ts';
export { ExpressionEvaluationError } from './expression/expression-evaluation-error.ts';
export { ExpressionLimitError } from './expression/expression-limit-error.ts';
export { MissingArgumentError } from './missing-argument-error.ts';
export { ArgumentConflictError } from './argument-conflict-error.ts';
export { DuplicateMetricError } from './duplicate-metric-error.ts';
export { resolveNestedTemplates } from './nested-templates.ts';
export type { ResolvedTemplate, TemplateReader } from './nested-templates.ts';
export { TemplateCycleError } from './template-cycle-error.ts';
export { MissingTemplateError } from './missing-template-error.ts';
export { MetricSettingsError } from './metric-settings-error.ts';
export type {
  MetricProvider,
  MetricProviderRegistry,
  MeasureContext,
  ProviderMeasurement,
} from './providers/metric-provider.ts';
export type { JobRunner, JobManifest, JobOwner, JobRunStatus } from './providers/job-runner.ts';
