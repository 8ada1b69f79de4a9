// Lint config: typescript-eslint type-aware rules, plus the purity fence around the planners.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const ioModules = ['@kubernetes/client-node', 'bullmq', 'ioredis', 'isomorphic-git', 'pino', 'prom-client'];

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
  {
    // The planners are pure functions of (spec, observed, now): no clock, no I/O.
    files: ['src/rollout/**/*.ts', 'src/analysis/**/*.ts'],
    ignores: ['src/analysis/providers/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ioModules.map((name) => ({
            name,
            message: 'planners are pure: do I/O in src/kube or a provider',
          })),
          patterns: [{ group: ['node:*'], message: 'planners are pure: no node: modules' }],
        },
      ],
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
);
