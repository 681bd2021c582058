/**
 * Terra's webhook receiver (docs/terra.md): `POST /webhooks/terra`, outside /v1's API-key auth, since Terra proves
 * itself with a signature instead. The raw body is read up to its limit and its `terra-signature` checked before
 * anything parses it; then the event is stored, sealed, under its dedupe key, and answered at once. Ingestion runs
 * afterwards in a workflow of its own (workflows/terra-ingest.ts, started by the worker's dispatcher), so Terra's
 * eight seconds are never spent on it and a crash after the 200 loses nothing. A refusal is logged with why, never
 * with the body.
 */
import express, { Router, type Request } from 'express';
import type { Pool } from 'pg';
import type { MasterKeyring } from '../../platform/crypto/master-key';
import type { Logger } from '../../platform/logger';
import { metrics } from '../../platform/metrics';
import { identifyTerraEvent, TerraEventUnreadable } from '../../platform/terra/events';
import { storeTerraEvent } from '../../platform/terra/inbox';
import { checkTerraSignature } from '../../platform/terra/signature';
import { ApiError } from '../errors';

const TERRA_WEBHOOK_PATH = '/webhooks/terra';

export interface TerraReceiverDeps {
  pool: Pool;
  keyring: MasterKeyring;
  logger: Logger;
  terra: {
    /** null when the operator has not configured one: every delivery is answered 503, so Terra keeps it. */
    signingSecret: string | null;
    toleranceSeconds: number;
    maxBodyBytes: number;
  };
}

/**
 * `x-terra-ordering-timestamp`: when Terra produced the event, in Unix milliseconds, the same on every retry; null
 * when absent or not a plausible instant (then the receipt orders it).
 */
function orderingTimestamp(req: Request): Date | null {
  const text = req.get('x-terra-ordering-timestamp');
  if (!text || !/^\d{12,14}$/.test(text)) return null;
  const at = new Date(Number(text));
  return Number.isNaN(at.getTime()) ? null : at;
}

/** Terra's docs name `terra-signature`; deliveries have also been seen with `x-terra-signature`. */
const signatureHeader = (req: Request) => req.get('terra-signature') ?? req.get('x-terra-signature');

export function terraReceiverRoutes({ pool, keyring, logger, terra }: TerraReceiverDeps): Router {
  const router = Router();
  router.post(
    TERRA_WEBHOOK_PATH,
    // Whatever its Content-Type, the body is read as bytes: the signature is over them, not over a parse of them.
    express.raw({ type: () => true, limit: terra.maxBodyBytes }),
    async (req, res) => {
      if (terra.signingSecret === null) {
        logger.warn('terra event refused: no signing secret configured');
        throw new ApiError(
          'service_unavailable',
          'The Terra receiver is not configured: set TERRA_SIGNING_SECRET or TERRA_SIGNING_SECRET_FILE.',
        );
      }
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const check = checkTerraSignature(body, signatureHeader(req), terra.signingSecret, {
        nowSeconds: Math.floor(Date.now() / 1000),
        toleranceSeconds: terra.toleranceSeconds,
      });
      if (!check.ok) {
        logger.warn('terra event refused: bad signature', { reason: check.reason, bytes: body.length });
        metrics.terraEvent('refused_signature');
        throw new ApiError('invalid_signature', `The terra-signature header does not verify (${check.reason}).`);
      }
      let identity;
      try {
        identity = identifyTerraEvent(JSON.parse(body.toString('utf8')));
      } catch (err) {
        const reason = err instanceof TerraEventUnreadable ? 'no type' : 'not JSON';
        logger.warn('terra event refused: unreadable', { reason, bytes: body.length });
        metrics.terraEvent('refused_body');
        throw err instanceof TerraEventUnreadable
          ? new ApiError('invalid_request', 'The body is not a Terra event: it has no `type`.')
          : new ApiError('invalid_json', 'The request body is not valid JSON.');
      }
      const terraReference = req.get('terra-reference') ?? null;
      let stored;
      try {
        stored = await storeTerraEvent(pool, keyring, {
          identity,
          terraReference,
          orderedAt: orderingTimestamp(req),
          body,
        });
      } catch (err) {
        // Postgres away: not stored, so not acknowledged; Terra delivers it again later.
        logger.warn('terra event not stored', { type: identity.type, error: (err as Error).message });
        metrics.terraEvent('unavailable');
        throw new ApiError('service_unavailable', 'The event could not be stored; send it again later.', undefined, {
          'Retry-After': '30',
        });
      }
      metrics.terraEvent(stored.duplicate ? 'duplicate' : 'stored');
      logger.info('terra event received', {
        terra_event_id: stored.id,
        type: identity.type,
        duplicate: stored.duplicate,
        bytes: body.length,
      });
      res.json({ received: true, id: stored.id, duplicate: stored.duplicate });
    },
  );
  return router;
}
