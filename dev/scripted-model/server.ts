/**
 * The scripted model: an Anthropic-compatible Messages API (`POST /v1/messages`, streaming and not)
 * that answers each pipeline step from deterministic rules, so the service, the demo and every test
 * run through the real SDK without an API key. Tests steer it over `/_control/*`, which answers only
 * requests addressed to the server's own loopback host:port (./http.ts, `controlRefusal`).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ulid } from 'ulid';
import { ZodError } from 'zod';
import { FaultController, faultSpecSchema } from './faults';
import { controlRefusal, ownHosts, readJsonBody, ScriptedHttpError, sendApiError, sendJson } from './http';
import { createMessagesEndpoint } from './messages-endpoint';
import { RequestLog } from './request-log';
import { defaultRules } from './rules';
import type { Pacing } from './pacing';
import type { ModelCallId } from '../../contracts/steps';
import type { ScriptedRule } from './types';

export interface ScriptedModelServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  rules?: ScriptedRule[];
  /** Pause before each streamed content delta; 0 streams as fast as the socket takes it. */
  streamChunkDelayMs?: number;
  /** Answer as slowly as a real model would (./pacing.ts); unset, answers come at once. */
  pacing?: Pacing;
}

export interface ScriptedModelServer {
  /** Base URL for the SDK's `baseURL`. */
  url: string;
  port: number;
  faults: FaultController;
  requests: RequestLog;
  close(): Promise<void>;
}

function rulesByStep(rules: ScriptedRule[]): Map<ModelCallId, ScriptedRule> {
  const byStep = new Map<ModelCallId, ScriptedRule>();
  for (const rule of rules) {
    if (byStep.has(rule.step)) throw new Error(`two scripted rules for step "${rule.step}"`);
    byStep.set(rule.step, rule);
  }
  return byStep;
}

export async function startScriptedModelServer(options: ScriptedModelServerOptions = {}): Promise<ScriptedModelServer> {
  const faults = new FaultController();
  const requests = new RequestLog();
  const handleMessages = createMessagesEndpoint({
    rules: rulesByStep(options.rules ?? defaultRules),
    faults,
    requests,
    streamChunkDelayMs: options.streamChunkDelayMs ?? 0,
    pacing: options.pacing ?? null,
  });

  /** What Host (and Origin) the control endpoints accept: set once the server listens. */
  let hosts = new Set<string>();

  async function handleControl(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const refusal = controlRefusal(req, hosts);
    if (refusal) return sendApiError(res, 403, 'permission_error', refusal);
    const route = `${req.method} ${path}`;
    switch (route) {
      case 'GET /_control/faults':
        return sendJson(res, 200, { data: faults.pending() });
      case 'POST /_control/faults':
        return sendJson(res, 201, faults.inject(faultSpecSchema.parse(await readJsonBody(req))));
      case 'DELETE /_control/faults':
        faults.clear();
        return sendJson(res, 200, { data: [] });
      case 'GET /_control/requests':
        return sendJson(res, 200, { data: requests.entries() });
      case 'DELETE /_control/requests':
        requests.clear();
        return sendJson(res, 200, { data: [] });
      default:
        return sendApiError(res, 404, 'not_found_error', `No route for ${route}`);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, closed: AbortSignal): Promise<void> {
    res.setHeader('request-id', `req_scripted_${ulid()}`);
    const path = new URL(req.url ?? '/', 'http://scripted-model').pathname;
    if (path === '/v1/messages') {
      if (req.method !== 'POST') return sendApiError(res, 404, 'not_found_error', `No route for ${req.method} ${path}`);
      return handleMessages(req, res, closed);
    }
    if (path.startsWith('/_control/')) return handleControl(req, res, path);
    return sendApiError(res, 404, 'not_found_error', `No route for ${req.method} ${path}`);
  }

  const server = http.createServer((req, res) => {
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    handle(req, res, closed.signal).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
      } else if (err instanceof ScriptedHttpError) {
        sendApiError(res, err.status, err.type, err.message);
      } else if (err instanceof ZodError) {
        const issue = err.issues[0];
        sendApiError(res, 400, 'invalid_request_error', `${issue.path.join('.') || 'body'}: ${issue.message}`);
      } else {
        sendApiError(res, 500, 'api_error', `Scripted model failed: ${err instanceof Error ? err.message : err}`);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  hosts = ownHosts(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    faults,
    requests,
    close() {
      // Hanging and streaming requests would otherwise hold close() open until their clients give up.
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
