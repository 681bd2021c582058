// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
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
      'dist/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.json'] })],
    },
    rules: {
      // An import circle means two modules are one job split in two, or one leans on the other's insides:
      // either way the layering no longer says what depends on what.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
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
          'IntersectionObserver',
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
    files: ['activities/**/*.ts', 'checks/**/*.ts', 'platform/**/*.ts', 'worker/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [devToolingOnly] }] },
  },
  {
    // contracts/ is the ground floor: the API, the workflows, the SDK and the CLI's bundle all import it, so it
    // takes nothing from above (platform/, activities/, dev/, ...) and no package but zod. What it shares with
    // the platform code lives here and the platform imports it, never the reverse.
    files: ['contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\.|zod$)', message: 'contracts/ may import only contracts/ and zod' }] },
      ],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './contracts',
              from: './',
              except: ['./contracts', './node_modules'],
              message: 'contracts/ may import only contracts/ and zod',
            },
          ],
        },
      ],
    },
  },
);
