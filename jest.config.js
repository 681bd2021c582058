/**
 * Test tiers, each a jest project (`npm run test:unit`, `test:toolchain`, `test:workflows`; `npm test` runs them all):
 *
 * - unit: pure modules, no Postgres and no Temporal (a short Python script and built bundles at most); the loop
 *   run after every change, so it stays fast: a suite whose cost is a whole tool's run goes to toolchain, and the
 *   gates' pool of Python processes to steps;
 * - toolchain: the repository's own tools run over its files and probes (tsc, ESLint, knip, hadolint,
 *   docker-compose): that each check bites, and what the SDK package and the deploy files give a consumer;
 * - workflows: TurnWorkflow on a Temporal dev server with inline fake activities, no database;
 * - services: single steps against Postgres and the scripted model (steps), the whole service over
 *   HTTP, SSE, the SDK, the CLI and a browser (e2e), and real faults (faults). Only this project's
 *   global setup starts Postgres and Temporal, and only when one of its suites runs.
 */
const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^@amy/sdk$': '<rootDir>/sdk/src/index.ts' },
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60_000,
  projects: [
    { ...shared, displayName: 'unit', roots: ['<rootDir>/test/unit'] },
    { ...shared, displayName: 'toolchain', roots: ['<rootDir>/test/toolchain'] },
    { ...shared, displayName: 'workflows', roots: ['<rootDir>/test/workflows'] },
    {
      ...shared,
      displayName: 'services',
      roots: ['<rootDir>/test/steps', '<rootDir>/test/e2e', '<rootDir>/test/faults'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
