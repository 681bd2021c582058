/**
 * The webhook events the service sends (docs/webhooks.md): their types and their thin payloads, shared by
 * the service (platform/webhooks/) and the SDK's `verifyWebhook`. A payload names what happened and to what
 * (ids, a status, instants); it never holds a message, an answer, a memory's text or a data value: the
 * receiver fetches those with its own API key.
 */
import type { TerraConnectionStatus } from './data';

export const WEBHOOK_EVENT_TYPES = [
  'turn.completed',
  'turn.failed',
  'turn.cancelled',
  'turn.input_required',
  'memory.created',
  'account.deleted',
  'data.updated',
  'data.connection_changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

/** A turn's end: `turn.completed`, `turn.failed`, or `turn.cancelled` (a failed turn whose error is `cancelled`). */
export interface TurnEndedWebhookData {
  turn_id: string;
  user_id: string;
  status: 'completed' | 'failed';
  /** The failed turn's error code (contracts/errors.ts), null when it completed. */
  error_code: string | null;
  created_at: string;
  completed_at: string;
}

/**
 * A turn asks its user a question and waits (docs/api.md#asking-back), so a backend whose user is not watching can
 * tell them. The question itself is read with GET /v1/turns/:id (`pending_input`), as the answer is sent.
 */
interface TurnInputRequiredWebhookData {
  turn_id: string;
  user_id: string;
  request_id: string;
  kind: 'clarification' | 'confirmation';
  expires_at: string;
}

/** A memory entry a turn wrote; `GET /v1/memory` lists it (there is no route for one entry). */
export interface MemoryCreatedWebhookData {
  entry_id: string;
  user_id: string;
  turn_id: string;
  category: string;
  created_at: string;
}

/** An account deleted with `DELETE /v1/account`: everything of the user is gone from the service. */
export interface AccountDeletedWebhookData {
  user_id: string;
  deleted_at: string;
}

/** The tables a user's data changed in, as `data.updated` names them. */
export type DataTable = 'daily_summaries' | 'workouts' | 'lab_results' | 'profile';

/**
 * A user's health data changed from a source the backend did not write itself (Terra: docs/terra.md): which tables
 * and which days, never a value. A large request's chunks are reported once, when the last has arrived.
 */
export interface DataUpdatedWebhookData {
  user_id: string;
  source: 'terra';
  tables: DataTable[];
  /** The first and last day of the rows written (YYYY-MM-DD); null when only the profile changed. */
  from: string | null;
  to: string | null;
  /** The large request (Terra's `reference`) this completes, null for a single event. */
  backfill_reference: string | null;
}

/**
 * A provider connection of a user's changed (Terra's connection events): `reauth_required`, `revoked` and `error`
 * mean the user should reconnect through Terra's widget; `auth_failed` is a connection attempt that did not finish
 * (no provider is named then); `replaced` is a connection a reconnection superseded.
 */
export interface DataConnectionChangedWebhookData {
  user_id: string;
  provider: string | null;
  terra_user_id: string | null;
  status: TerraConnectionStatus | 'auth_failed' | 'replaced';
  previous_status: TerraConnectionStatus | null;
  changed_at: string;
}

interface WebhookDataByType {
  'turn.completed': TurnEndedWebhookData;
  'turn.failed': TurnEndedWebhookData;
  'turn.cancelled': TurnEndedWebhookData;
  'turn.input_required': TurnInputRequiredWebhookData;
  'memory.created': MemoryCreatedWebhookData;
  'account.deleted': AccountDeletedWebhookData;
  'data.updated': DataUpdatedWebhookData;
  'data.connection_changed': DataConnectionChangedWebhookData;
}

/** The JSON body of a webhook request: `type`, `timestamp` (when the event happened, ISO 8601) and `data`. */
export type WebhookEvent = {
  [T in WebhookEventType]: { type: T; timestamp: string; data: WebhookDataByType[T] };
}[WebhookEventType];

export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;
