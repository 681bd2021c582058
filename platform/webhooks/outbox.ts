/**
 * The webhook outbox (docs/webhooks.md#delivery): an event is a row of `webhook_events`, inserted in the very
 * transaction that commits what it reports (a turn's terminal transition, the memory entries a turn writes, an
 * account's deletion). So an event exists if and only if its fact does: a crash before the commit loses both,
 * a crash after it leaves the row for the worker's dispatcher (./dispatcher.ts), which starts its deliveries.
 *
 * - Written only when an enabled endpoint subscribes to its type: with no endpoint, a turn costs no outbox row.
 *   An endpoint added later receives the events that happen after it, not the ones before.
 * - `dedupeKey` names the fact: a second writer reporting the same fact (a retried activity, the reconciler
 *   after the workflow) adds nothing, so one fact is one `webhook-id`.
 * - The payload is thin (contracts/webhooks.ts): ids, a status, instants.
 */
import type { PoolClient } from 'pg';
import type {
  DataConnectionChangedWebhookData,
  DataTable,
  WebhookEvent,
  WebhookEventType,
} from '../../contracts/webhooks';
import { newId } from '../ids';

/** The outbox rows to write, one per fact; `timestamp` is when it happened. */
export interface OutboxEvent {
  event: WebhookEvent;
  dedupeKey: string;
}

/**
 * Inserts the events whose type an enabled endpoint subscribes to, in the caller's transaction. Returns how many
 * were written.
 */
export async function recordWebhookEvents(client: PoolClient, events: OutboxEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rowCount } = await client.query(
    `INSERT INTO webhook_events (id, type, payload, dedupe_key)
     SELECT e.id, e.type, e.payload, e.dedupe_key
     FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[]) AS e (id, type, payload, dedupe_key)
     WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.disabled_at IS NULL AND e.type = ANY (w.event_types))
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [
      events.map(() => newId('webhookMessage')),
      events.map((e) => e.event.type),
      events.map((e) => JSON.stringify(e.event)),
      events.map((e) => e.dedupeKey),
    ],
  );
  return rowCount ?? 0;
}

/** A turn's end as its event: `turn.cancelled` when it failed by cancellation. */
export function turnEndedEvent(turn: {
  id: string;
  userId: string;
  attempt: number;
  status: 'completed' | 'failed';
  errorCode: string | null;
  createdAt: Date;
  completedAt: Date;
}): OutboxEvent {
  const type: WebhookEventType =
    turn.status === 'completed' ? 'turn.completed' : turn.errorCode === 'cancelled' ? 'turn.cancelled' : 'turn.failed';
  return {
    // A turn retried after failing (npm run turn:retry) ends again: once per attempt.
    dedupeKey: `${type}:${turn.id}:${turn.attempt}`,
    event: {
      type,
      timestamp: turn.completedAt.toISOString(),
      data: {
        turn_id: turn.id,
        user_id: turn.userId,
        status: turn.status,
        error_code: turn.status === 'failed' ? turn.errorCode : null,
        created_at: turn.createdAt.toISOString(),
        completed_at: turn.completedAt.toISOString(),
      },
    } as WebhookEvent,
  };
}

/** A turn waits for its user's answer: once per question. */
export function turnInputRequiredEvent(question: {
  turnId: string;
  userId: string;
  requestId: string;
  kind: 'clarification' | 'confirmation';
  expiresAt: string;
  at: Date;
}): OutboxEvent {
  return {
    dedupeKey: `turn.input_required:${question.requestId}`,
    event: {
      type: 'turn.input_required',
      timestamp: question.at.toISOString(),
      data: {
        turn_id: question.turnId,
        user_id: question.userId,
        request_id: question.requestId,
        kind: question.kind,
        expires_at: question.expiresAt,
      },
    },
  };
}

export function memoryCreatedEvent(entry: {
  id: string;
  userId: string;
  turnId: string;
  category: string;
  createdAt: Date;
}): OutboxEvent {
  return {
    dedupeKey: `memory.created:${entry.id}`,
    event: {
      type: 'memory.created',
      timestamp: entry.createdAt.toISOString(),
      data: {
        entry_id: entry.id,
        user_id: entry.userId,
        turn_id: entry.turnId,
        category: entry.category,
        created_at: entry.createdAt.toISOString(),
      },
    },
  };
}

export function accountDeletedEvent(userId: string, deletedAt: Date): OutboxEvent {
  return {
    dedupeKey: `account.deleted:${userId}`,
    event: {
      type: 'account.deleted',
      timestamp: deletedAt.toISOString(),
      data: { user_id: userId, deleted_at: deletedAt.toISOString() },
    },
  };
}

/** A user's data changed from Terra (platform/terra/ingest.ts): which tables and days, no value. */
export function dataUpdatedEvent(update: {
  dedupeKey: string;
  userId: string;
  tables: DataTable[];
  from: string | null;
  to: string | null;
  backfillReference: string | null;
  at: Date;
}): OutboxEvent {
  return {
    dedupeKey: update.dedupeKey,
    event: {
      type: 'data.updated',
      timestamp: update.at.toISOString(),
      data: {
        user_id: update.userId,
        source: 'terra',
        tables: update.tables,
        from: update.from,
        to: update.to,
        backfill_reference: update.backfillReference,
      },
    },
  };
}

/** A user's provider connection changed (platform/terra/connections.ts). */
export function connectionChangedEvent(change: {
  dedupeKey: string;
  userId: string;
  change: {
    terraUserId: string | null;
    provider: string | null;
    status: DataConnectionChangedWebhookData['status'];
    previousStatus: DataConnectionChangedWebhookData['previous_status'];
  };
  at: Date;
}): OutboxEvent {
  return {
    dedupeKey: change.dedupeKey,
    event: {
      type: 'data.connection_changed',
      timestamp: change.at.toISOString(),
      data: {
        user_id: change.userId,
        provider: change.change.provider,
        terra_user_id: change.change.terraUserId,
        status: change.change.status,
        previous_status: change.change.previousStatus,
        changed_at: change.at.toISOString(),
      },
    },
  };
}
