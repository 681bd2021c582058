export interface TestEnv {
  adminUrl: string;
  temporalAddress: string;
  /** Workflow code bundled once by the global setup. */
  workflowBundlePath: string;
}

export const TEMPLATE_DB = 'amy_test_template';

/** The global setup publishes the infrastructure's addresses here; jest workers inherit them. */
export const TEST_ENV_VAR = 'AMY_TEST_ENV';

export function readTestEnv(): TestEnv {
  const raw = process.env[TEST_ENV_VAR];
  if (!raw) throw new Error(`${TEST_ENV_VAR} is not set: run the suites through jest (test/support/global-setup.ts)`);
  return JSON.parse(raw) as TestEnv;
}
