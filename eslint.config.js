// Lint config: typescript-eslint type-aware rules, the module arrows (docs/architecture.md), and the purity fence around the planners.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const ioModules = ['@kubernetes/client-node', 'bullmq', 'ioredis', 'isomorphic-git', 'pino', 'prom-client'];

// The dependency arrows (docs/architecture.md, from the design's ARCHITECTURE.md "Modules"). Flat config does
// not merge one rule's options across blocks (the last block that matches a file wins), so every block below
// lists all that apply to its folder.
const noWorkers = {
  regex: '(^|/)workers/',
  message: 'src/ never imports workers/: process entry points import src, not the reverse (see src/process)',
};
const noSync = {
  regex: '(^|/)sync/',
  message: 'src/queue does not import src/sync (sync uses the queue, not the reverse)',
};
const noTraffic = {
  regex: '(^|/)traffic/',
  message:
    'src/kube, src/reconciler and src/views do not import traffic planning: src/traffic holds pure translators, wired in src/process',
};
// The Kubernetes adapter (src/kube) sits below the reconciler and the views; the reconciler below the views.
const noReconciler = {
  regex: '(^|/)reconciler/',
  message:
    'src/reconciler sits above the Kubernetes adapter (src/kube): neither src/kube nor the sandbox imports the reconcile loop',
};
const noViews = {
  regex: '(^|/)views/',
  message: 'the read models and user verbs (src/views) import src/kube and src/reconciler, not the reverse',
};
const noProcess = {
  regex: '(^|/)process/',
  message: 'src/process wires everything: nothing it wires imports it (list/watch restarts live in src/kube)',
};
const noQueue = {
  regex: '(^|/)queue/',
  message:
    'the Kubernetes adapter (src/kube) and the sandbox know no queue: a backoff both need is in src/clock (capped-backoff.ts)',
};
const noCli = {
  regex: '(^|/)cli/',
  message:
    'src/demo does not import src/cli (the CLI imports the demo): what both need lives below them, e.g. the rollout tree in src/views',
};
const onlyExpressionOfAnalysis = {
  // notify's `when` and `oncePer` are the analysis condition language: one parser, imported, never copied.
  regex: '(^|/)analysis/(?!expression/)',
  message:
    'src/notify imports only the condition language (src/analysis/expression) from src/analysis: see docs/architecture.md',
};
const noNotify = {
  regex: '(^|/)notify/',
  message: 'the planners do not import src/notify: notify imports the condition language, not the reverse',
};
const onlyItsOwnFolder = {
  regex: '^\\.\\./',
  message:
    'src/analysis/expression imports nothing outside its folder: src/notify imports it, and must get the parser alone',
};
const onlyLeaves = {
  // The renderers are below the Git source (src/git imports them): they read Git objects through an interface.
  regex: '(^|/)(git|sync|kube|queue|process|server|promoter|config|reconciler|views|sandbox|cli|demo)/',
  message: 'src/render imports only the leaves (clock, log, manifest): src/git uses it, not the reverse',
};
const arrows = (...patterns) => ['error', { patterns }];

// The purity fence (see the planner blocks below): no I/O module, no node: module, plus the folder's arrows.
const pureImports = (...patterns) => [
  'error',
  {
    paths: ioModules.map((name) => ({
      name,
      message: 'planners are pure: do I/O in src/kube or a provider',
    })),
    patterns: [{ group: ['node:*'], message: 'planners are pure: no node: modules' }, noWorkers, ...patterns],
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'deploy/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': arrows(noWorkers) } },
  // The dashboard's page script runs in the browser, not in Node.
  { files: ['src/server/dashboard/assets/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  { files: ['src/queue/**/*.ts'], rules: { 'no-restricted-imports': arrows(noWorkers, noSync) } },
  {
    files: ['src/kube/**/*.ts'],
    rules: {
      'no-restricted-imports': arrows(noWorkers, noTraffic, noReconciler, noViews, noProcess, noQueue),
    },
  },
  {
    files: ['src/reconciler/**/*.ts'],
    rules: { 'no-restricted-imports': arrows(noWorkers, noTraffic, noViews, noProcess) },
  },
  {
    files: ['src/views/**/*.ts'],
    rules: { 'no-restricted-imports': arrows(noWorkers, noTraffic, noProcess) },
  },
  // The sandbox is a cluster, not a controller: of Rollgate it imports the Kubernetes adapter (src/kube) only.
  {
    files: ['src/sandbox/**/*.ts'],
    rules: { 'no-restricted-imports': arrows(noWorkers, noReconciler, noViews, noProcess, noQueue) },
  },
  { files: ['src/render/**/*.ts'], rules: { 'no-restricted-imports': arrows(noWorkers, onlyLeaves) } },
  { files: ['src/demo/**/*.ts'], rules: { 'no-restricted-imports': arrows(noWorkers, noCli) } },
  {
    files: ['src/notify/services/**/*.ts'],
    rules: { 'no-restricted-imports': arrows(noWorkers, onlyExpressionOfAnalysis) },
  },
  {
    // The planners (and `rollgate plan`'s simulation around them) are pure functions of (spec, observed, now):
    // no clock, no I/O. src/notify is pure too, but for its senders (src/notify/services), the imperative shell.
    files: [
      'src/rollout/**/*.ts',
      'src/experiment/**/*.ts',
      'src/analysis/**/*.ts',
      'src/promotion/**/*.ts',
      'src/revert/**/*.ts',
      'src/fleet/plan-fleet.ts',
      'src/fleet/resolve-waves.ts',
      'src/fleet/fleet-status.ts',
      'src/fleet/fleet-action.ts',
      'src/plan/**/*.ts',
      'src/health/**/*.ts',
      'src/notify/**/*.ts',
    ],
    ignores: ['src/analysis/providers/**', 'src/notify/services/**'],
    rules: {
      'no-restricted-imports': pureImports(noNotify),
      // Clocks, timers, network and process state reached as globals rather than imports.
      'no-restricted-globals': [
        'error',
        ...['fetch', 'performance', 'setTimeout', 'setInterval', 'setImmediate', 'process', 'crypto'].map(
          (name) => ({ name, message: 'planners are pure: take time and results as parameters' }),
        ),
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'take `now` as a parameter',
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'take `now` as a parameter',
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: 'planners are deterministic',
        },
      ],
    },
  },
  // After the purity block, so that it wins for src/notify (flat config keeps the last block's options).
  {
    files: ['src/notify/**/*.ts'],
    ignores: ['src/notify/services/**'],
    rules: { 'no-restricted-imports': pureImports(onlyExpressionOfAnalysis) },
  },
  {
    files: ['src/analysis/expression/**/*.ts'],
    rules: { 'no-restricted-imports': pureImports(noNotify, onlyItsOwnFolder) },
  },
);
