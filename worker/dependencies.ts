import type { Config } from '../activities/services/config';
import { createDb } from '../activities/services/db';
import { createEventLog } from '../activities/services/event-log';
import { createPgPool } from '../activities/services/pg-pool';
import { createAnthropicClient, createLlm } from '../activities/services/llm';
import type { StepDeps } from '../activities';

/** The composition root's wiring: connections and services for the activities, from configuration. */
export function createStepDeps(config: Config): StepDeps & { close(): Promise<void> } {
  const db = createDb(config.DATABASE_URL);
  const pool = createPgPool(config.DATABASE_URL, 20);
  const events = createEventLog(pool);
  const llm = createLlm({
    anthropic: createAnthropicClient(config),
    db,
    events,
    costWarnUsd: config.AMY_COST_WARN_USD,
  });
  return {
    db,
    pool,
    events,
    llm,
    models: {
      main: config.AMY_MODEL,
      fast: config.AMY_FAST_MODEL,
      dataScience: config.AMY_DS_MODEL,
      validator: config.AMY_VALIDATOR_MODEL,
    },
    clock: () => new Date(),
    async close() {
      await Promise.allSettled([db.$disconnect(), pool.end()]);
    },
  };
}
