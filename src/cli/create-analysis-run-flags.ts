// `rollgate create analysisrun` flags to one request (pure): which template, which arguments, which name.
import type { Argument } from '../manifest/analysis.ts';

/** The flags as Commander parses them. */
export interface CreateAnalysisRunFlags {
  from?: string;
  fromFile?: string;
  fromClusterTemplate?: string;
  global?: boolean;
  argument?: string[];
  name?: string;
  generateName?: string;
}

/** Where the template comes from: an AnalysisTemplate or ClusterAnalysisTemplate in the cluster, or a file. */
export type TemplateSource =
  | { kind: 'AnalysisTemplate' | 'ClusterAnalysisTemplate'; name: string }
  | { kind: 'file'; path: string; global: boolean };

/**
 * What to create: the run is named `name`, or by the API server from `generateName`; without either,
 * as Argo's plugin does, from `<template name>-`.
 */
export interface CreateAnalysisRunRequest {
  template: TemplateSource;
  args: Argument[];
  naming?: { name: string } | { generateName: string };
}

/** Reads the flags; a string is the usage error to say (the call itself was wrong: exit code 2). */
export function parseCreateAnalysisRunFlags(
  flags: CreateAnalysisRunFlags,
): CreateAnalysisRunRequest | string {
  const sources = [flags.from, flags.fromFile, flags.fromClusterTemplate].filter((s) => s !== undefined);
  if (sources.length !== 1) return 'give exactly one of --from, --from-file or --from-cluster-template';
  const template: TemplateSource =
    flags.fromFile !== undefined
      ? { kind: 'file', path: flags.fromFile, global: flags.global === true }
      : {
          kind:
            flags.fromClusterTemplate !== undefined || flags.global === true
              ? 'ClusterAnalysisTemplate'
              : 'AnalysisTemplate',
          name: (flags.fromClusterTemplate ?? flags.from) as string,
        };
  const args: Argument[] = [];
  for (const text of flags.argument ?? []) {
    const eq = text.indexOf('=');
    if (eq <= 0) return `--argument ${JSON.stringify(text)} must be NAME=VALUE`;
    args.push({ name: text.slice(0, eq), value: text.slice(eq + 1) });
  }
  if (flags.name !== undefined && flags.generateName !== undefined)
    return 'give --name or --generate-name, not both';
  if (flags.name !== undefined) return { template, args, naming: { name: flags.name } };
  if (flags.generateName !== undefined)
    return { template, args, naming: { generateName: flags.generateName } };
  return { template, args };
}
