/**
 * The JSON body parser of `/v1`, with a limit per route. A turn's creation carries the whole conversation, so
 * its limit is what the message limits allow however the client's encoder writes them
 * (contracts/conversation-limits.ts), about 23 MiB; every other route keeps AMY_BODY_LIMIT_BYTES (256 KiB
 * by default), since none of them takes that much (500 rows of health data, a memory entry). Past either, a
 * 413 in the envelope, before anything is parsed. The slow-body bounds (AMY_REQUEST_TIMEOUT_MS) hold for both.
 */
import express, { type RequestHandler } from 'express';
import { MAX_CREATE_TURN_BODY_BYTES } from '../contracts/conversation-limits';

/** application/fhir+json too: POST /v1/data/labs takes a FHIR R4 Bundle as FHIR servers send it. */
const JSON_TYPES = ['application/json', 'application/fhir+json'];

/** `POST /v1/turns`, as the router matches it: any case, with or without a trailing slash. Mounted at /v1. */
const isTurnCreation = (method: string, path: string) => method === 'POST' && /^\/turns\/?$/i.test(path);

export function jsonBodies(otherRoutesLimitBytes: number): RequestHandler {
  const turnCreation = express.json({ limit: MAX_CREATE_TURN_BODY_BYTES, strict: true, type: JSON_TYPES });
  const otherRoutes = express.json({ limit: otherRoutesLimitBytes, strict: true, type: JSON_TYPES });
  return (req, res, next) => (isTurnCreation(req.method, req.path) ? turnCreation : otherRoutes)(req, res, next);
}
