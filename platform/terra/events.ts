/**
 * What the receiver and ingestion read of a Terra event's body (Terra's OpenAPI document, `webhooks`; docs/terra.md):
 * its type and whose it is. Every other field is read by the mapping (./mapping) or by the connection and backfill
 * bookkeeping, each from the event type's own schema. Parsing is loose on purpose: Terra adds fields, and a field we
 * do not read must never make an event unreadable.
 */
import { z } from 'zod';

const terraUserSchema = z.looseObject({
  user_id: z.string().min(1),
  provider: z.string().min(1),
  reference_id: z.string().nullish(),
  scopes: z.string().nullish(),
});
export type TerraUser = z.infer<typeof terraUserSchema>;

const envelopeSchema = z.looseObject({ type: z.string().min(1) });

/** The event types Amy acts on; any other is stored, acknowledged and recorded as ignored. */
export const TERRA_DATA_TYPES = ['daily', 'sleep', 'body', 'activity'] as const;
export const TERRA_CONNECTION_TYPES = [
  'auth',
  'auth_cancelled',
  'user_reauth',
  'deauth',
  'access_revoked',
  'permission_change',
  'connection_error',
] as const;
export const TERRA_BACKFILL_TYPES = ['large_request_processing', 'large_request_sending'] as const;
export const TERRA_LAB_TYPES = ['lab_report.completed', 'lab_report.failed'] as const;

/** Who an event is about, as far as its body says. */
export interface TerraEventIdentity {
  type: string;
  /** Terra's user (a connection of one provider); null for a lab report or a cancelled auth. */
  terraUserId: string | null;
  provider: string | null;
  /** The id the backend gave Terra's widget, when the body carries it. */
  referenceId: string | null;
  /** A lab report's `event_id`, the same on every redelivery. */
  eventId: string | null;
}

export class TerraEventUnreadable extends Error {
  override name = 'TerraEventUnreadable';
}

/** The identity of a parsed event body; TerraEventUnreadable when it is not an object with a `type`. */
export function identifyTerraEvent(body: unknown): TerraEventIdentity {
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) throw new TerraEventUnreadable('the body is not a Terra event: no `type`');
  const event = envelope.data as Record<string, unknown>;
  const user = terraUserSchema.safeParse(event.type === 'user_reauth' ? event.new_user : event.user);
  const labData = z.looseObject({ reference_id: z.string().nullish() }).safeParse(event.data);
  const topReference = typeof event.reference_id === 'string' ? event.reference_id : null;
  return {
    type: envelope.data.type,
    terraUserId: user.success ? user.data.user_id : null,
    provider: user.success ? user.data.provider : null,
    referenceId:
      (user.success ? user.data.reference_id : null) ??
      topReference ??
      (labData.success ? (labData.data.reference_id ?? null) : null),
    eventId: typeof event.event_id === 'string' && event.event_id ? event.event_id : null,
  };
}

/** A connection event's users: the one it is about and, for a reauth, the connection it replaces. */
export function connectionEventUsers(body: Record<string, unknown>): {
  user: TerraUser | null;
  replaced: TerraUser | null;
} {
  const user = terraUserSchema.safeParse(body.type === 'user_reauth' ? body.new_user : body.user);
  const replaced = body.type === 'user_reauth' ? terraUserSchema.safeParse(body.old_user) : null;
  return { user: user.success ? user.data : null, replaced: replaced?.success ? replaced.data : null };
}

export const largeRequestSchema = z.looseObject({
  reference: z.string().min(1),
  expected_payloads: z.number().int().min(0).optional(),
});
