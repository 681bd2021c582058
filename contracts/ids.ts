import { z } from 'zod';

/** Typed id prefixes over ULIDs (Crockford base32, 26 chars). */
export const ID_PREFIXES = {
  turn: 'turn_',
  memory: 'mem_',
  request: 'req_',
  user: 'usr_',
  apiKey: 'key_',
  workout: 'wko_',
  labResult: 'lab_',
  accountDeletion: 'del_',
  webhookEndpoint: 'we_',
  /** A webhook event: its id is the Standard Webhooks `webhook-id` header. */
  webhookMessage: 'msg_',
  webhookDelivery: 'wd_',
  /** An event Terra delivered (docs/terra.md). */
  terraEvent: 'tev_',
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
export const turnIdSchema = z.string().regex(new RegExp(`^turn_${ULID}$`), 'must be a turn id (turn_<ULID>)');
export const isTurnId = (value: string) => turnIdSchema.safeParse(value).success;
