import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { EventLog } from '../../platform/event-log';
import type { GatesRunner } from '../../platform/gates';
import type { NetworkTools } from '../../platform/literature/network-tools';
import type { Llm } from '../../platform/llm';
import type { Sandbox } from '../../platform/sandbox';

/**
 * Model choice per role (AMY_MODEL, AMY_FAST_MODEL, AMY_DS_MODEL, AMY_VALIDATOR_MODEL), as configured:
 * aliases or exact ids. The LLM layer resolves them (platform/llm/models.ts).
 */
interface ModelSettings {
  main: string;
  fast: string;
  dataScience: string;
  validator: string;
}

/** Everything the step activities need, passed in by the worker's composition root. */
export interface StepDeps {
  /** Postgres, through the per-table functions of platform/ (see platform/pg-pool.ts). */
  pool: Pool;
  events: EventLog;
  llm: Llm;
  models: ModelSettings;
  /** Where the Data Science agent's generated code runs. */
  sandbox: Sandbox;
  /** The warm Python process the seven gates run in. */
  gates: GatesRunner;
  clock: () => Date;
  /** Temporal, for the reconciler of abandoned turns, which asks how a turn's workflow closed. */
  temporal: Client;
  /** The Domain Expert's network tools, when AMY_DE_NETWORK_TOOLS is on (activities/agents/domain-expert/network-tools.ts). */
  networkTools?: NetworkTools;
}
