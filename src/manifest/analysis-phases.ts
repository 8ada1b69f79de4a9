// The phases of an AnalysisRun (and of each metric): a module without the schemas, for readers that only
// need the names (the CLI's views load no zod for them).

export const ANALYSIS_PHASES = [
  'Pending',
  'Running',
  'Successful',
  'Failed',
  'Error',
  'Inconclusive',
] as const;
export type AnalysisPhase = (typeof ANALYSIS_PHASES)[number];
