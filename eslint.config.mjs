// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Workflow code must be deterministic: no Node built-ins and nothing that does I/O.
const forbiddenInWorkflows = [
  ...builtinModules,
  ...builtinModules.map((m) => `node:${m}`),
  'pg',
  '@prisma/*',
  '@anthropic-ai/sdk',
  'express',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
];

// What ships (the API, the worker and what they share) never reaches into dev/: the scripted model,
// the stack launcher, the benchmarks and the synthetic data are tooling around the service.
const devToolingOnly = { group: ['**/dev', '**/dev/**'], message: 'shipped code may not import dev/ tooling' };

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'generated/',
      '.data/',
      '.venv/',
      'coverage/',
      'gates-py/',
      '**/*.mjs',
      'jest.config.js',
      'sdk/dist/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: forbiddenInWorkflows.filter((m) => !m.includes('*')),
          patterns: [
            {
              group: ['@prisma/*', '../platform/*', '../api/*', '../worker/*'],
              message: 'workflow code may not do I/O',
            },
            devToolingOnly,
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process'],
    },
  },
  {
    // The web console's modules are served to the browser as written (no build step): browser globals only.
    files: ['console/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'sessionStorage',
          'requestAnimationFrame',
          'cancelAnimationFrame',
          'setInterval',
          'clearInterval',
          'AbortController',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // The SDK runs in browsers, Deno and Bun as well as Node: web platform APIs only.
    files: ['sdk/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules.flatMap((m) => [m, `node:${m}`]),
          patterns: [
            {
              group: ['../../../api/*', '../../../activities/*', '../../../workflows/*'],
              message: 'the SDK talks HTTP only',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
  {
    // The API serves turns; it never runs steps. What it shares with the worker lives in platform/.
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              message: 'api/ may not import activities/ (shared code lives in platform/)',
            },
            devToolingOnly,
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts', 'platform/**/*.ts', 'worker/**/*.ts', 'contracts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [devToolingOnly] }] },
  },
);
