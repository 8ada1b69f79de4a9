// What scripts/build.ts runs of each precompiled package before writing its code cache: the parts a verb
// runs at start (reading a kubeconfig, building and checking a Rollout's schema), so the cache holds
// them compiled and a verb does not compile them again at every start. Built beside the bundle; no verb
// imports it.
import type * as Yaml from 'yaml';
import type { z as Zod } from 'zod';

type Exports = Record<string, unknown>;

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: warm-up
    cluster:
      server: "https://127.0.0.1:6443"
      insecure-skip-tls-verify: true
users:
  - name: warm-up
    user: {token: abc}
contexts:
  - {name: warm-up, context: {cluster: warm-up, user: warm-up, namespace: default}}
current-context: warm-up
preferences: {}
`;

function warmUpYaml(exports: Exports): void {
  const yaml = exports as Partial<Pick<typeof Yaml, 'parse' | 'parseAllDocuments' | 'LineCounter'>>;
  yaml.parse?.(KUBECONFIG);
  if (yaml.parseAllDocuments !== undefined && yaml.LineCounter !== undefined)
    yaml.parseAllDocuments(`${KUBECONFIG}---\nkind: Rollout\nspec: {replicas: 2}\n`, {
      lineCounter: new yaml.LineCounter(),
    });
}

/** The members of zod's `z` a Rollout's schema is built of. */
const ZOD_MEMBERS = [
  'object',
  'looseObject',
  'string',
  'int',
  'number',
  'boolean',
  'array',
  'record',
  'union',
  'literal',
  'unknown',
  'enum',
] as const;

/** Whether the precompiled `z` has them all: it holds only the members the bundle reads. */
function hasZodMembers(z: unknown): z is Pick<typeof Zod, (typeof ZOD_MEMBERS)[number]> {
  return (
    typeof z === 'object' &&
    z !== null &&
    ZOD_MEMBERS.every((member) => typeof (z as Record<string, unknown>)[member] === 'function')
  );
}

/** The kinds of schema a Rollout's is made of, parsed valid and invalid (its issues too). */
function warmUpZod(exports: Exports): void {
  const { z } = exports;
  if (!hasZodMembers(z)) return;
  const metadata = z.object({ name: z.string().min(1), labels: z.record(z.string(), z.string()).optional() });
  const schema = z
    .object({
      apiVersion: z.enum(['v1', 'v2']),
      kind: z.literal('Rollout'),
      metadata,
      spec: z.object({
        replicas: z.int().min(0).optional(),
        steps: z.array(z.object({ setWeight: z.int().min(0).max(100).optional() })).optional(),
        maxSurge: z.union([z.int(), z.string()]).optional(),
        paused: z.boolean().optional(),
      }),
      status: z.looseObject({ phase: z.string().optional(), weight: z.number().optional() }).optional(),
      extra: z.unknown(),
    })
    .extend({ extended: z.string().optional() });
  schema.safeParse({
    apiVersion: 'v1',
    kind: 'Rollout',
    metadata: { name: 'a', labels: { app: 'a' } },
    spec: { replicas: 2, steps: [{ setWeight: 50 }], maxSurge: '25%', paused: false },
    status: { phase: 'Healthy', weight: 1.5, other: true },
  });
  schema.safeParse({
    apiVersion: 'v3',
    kind: 'Other',
    metadata: { name: '', labels: { app: 1 } },
    spec: { replicas: -1, steps: [{ setWeight: 150 }], maxSurge: null, paused: 'no' },
    status: { phase: 1 },
  });
}

/** The warm-up of each precompiled package, by package name; one without runs nothing. */
export const CODE_CACHE_WARM_UPS: Readonly<Record<string, (exports: Exports) => void>> = {
  yaml: warmUpYaml,
  zod: warmUpZod,
};

/** A cluster that refuses every connection: the verbs run up to their first request, and fail there. */
const REFUSING_KUBECONFIG = KUBECONFIG.replace('https://127.0.0.1:6443', 'https://127.0.0.1:1');

/** The command lines the hot verbs' warm-up runs: reading verbs, a writing one, a namespace's list. */
const HOT_VERB_WARM_UPS = [
  ['status', 'warm-up'],
  ['get', 'rollout', 'warm-up'],
  ['list', 'rollouts'],
  ['pause', 'warm-up'],
];

/**
 * What scripts/build.ts runs of the hot verbs' script (src/cli/hot-verbs.ts) before writing its code
 * cache: each verb against a cluster that refuses connections, so the modules a verb loads and the code up
 * to its request are in the cache. What they print goes to the build's pipes, not read.
 */
export async function warmUpHotVerbs(exports: Exports, kubeconfig: string): Promise<void> {
  const { main } = exports as { main?: (argv: string[]) => Promise<number> };
  if (main === undefined) return;
  const { writeFileSync } = process.getBuiltinModule('node:fs');
  writeFileSync(kubeconfig, REFUSING_KUBECONFIG);
  for (const words of HOT_VERB_WARM_UPS)
    await main(['node', 'rollgate', ...words, '--kubeconfig', kubeconfig]);
  process.exitCode = 0;
}
