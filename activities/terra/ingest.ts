/**
 * The activity of a Terra event's ingestion (workflows/terra-ingest.ts): one transaction against our own Postgres
 * (platform/terra/ingest.ts), so Temporal retrying it while Postgres is away is exactly what is wanted. It returns
 * counts only, since the workflow's history is kept in the clear: no value, no day, no path.
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { MasterKeyring } from '../../platform/crypto/master-key';
import { metrics } from '../../platform/metrics';
import { ingestTerraEvent } from '../../platform/terra/ingest';

export interface TerraDeps {
  pool: Pool;
  keyring: MasterKeyring;
}

export interface TerraIngestSummary {
  status: 'received' | 'applied' | 'unmatched' | 'refused' | 'gone';
  type: string;
  tables: string[];
  days: number;
  workouts: number;
  labResults: number;
  skipped: number;
}

export function createTerraActivities(deps: TerraDeps) {
  return {
    async ingestTerraEvent({ eventId }: { eventId: string }): Promise<TerraIngestSummary> {
      const outcome = await ingestTerraEvent({ ...deps, heartbeat: () => Context.current().heartbeat() }, eventId);
      if (outcome.status !== 'gone' && outcome.status !== 'received') metrics.terraEvent(outcome.status);
      // Ids, types and counts: what the operator needs to follow an event, nothing of its content.
      Context.current().log.info('terra event ingested', {
        terra_event_id: eventId,
        type: outcome.type,
        status: outcome.status,
        tables: outcome.tables ?? [],
        skipped: outcome.skipped?.length ?? 0,
        ...(outcome.note ? { note: outcome.note } : {}),
      });
      return {
        status: outcome.status,
        type: outcome.type,
        tables: outcome.tables ?? [],
        days: outcome.days ?? 0,
        workouts: outcome.workouts ?? 0,
        labResults: outcome.labResults ?? 0,
        skipped: outcome.skipped?.length ?? 0,
      };
    },
  };
}

export type TerraActivities = ReturnType<typeof createTerraActivities>;
