import express from 'express';
import type { GatesRunner } from '../platform/gates';
import { newId } from '../platform/ids';
import { refuseApiKeyInUrl, requireApiKey } from './auth';
import { ApiError, errorMiddleware } from './errors';
import { httpMetrics } from './http-metrics';
import { jsonBodies } from './json-bodies';
import { buildOpenApiDocument } from './openapi';
import { accountRoutes, type AccountRoutesDeps } from './routes/account';
import { consoleRoutes } from './routes/console';
import { dataRoutes } from './routes/data';
import { findingRoutes } from './routes/findings';
import { healthRoutes } from './routes/health';
import { memoryRoutes } from './routes/memory';
import { terraReceiverRoutes, type TerraReceiverDeps } from './routes/terra';
import { turnRoutes, type TurnRoutesDeps } from './routes/turns';

export interface AppDeps extends TurnRoutesDeps, Pick<AccountRoutesDeps, 'keys'> {
  /** The body limit of every /v1 route but a turn's creation, whose limit is the contract's (./json-bodies.ts). */
  bodyLimitBytes: number;
  /** Cuts a finding's series again for GET …/findings/:finding_id/series; without it that route answers 503. */
  gates?: Pick<GatesRunner, 'buildSeries'>;
  /** Terra's webhook receiver (docs/terra.md); without it POST /webhooks/terra is not a route. */
  terraReceiver?: Pick<TerraReceiverDeps, 'keyring' | 'terra'>;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(httpMetrics());
  app.use((_req, res, next) => {
    res.locals.requestId = newId('request');
    res.set('X-Request-Id', res.locals.requestId as string);
    next();
  });
  app.use(refuseApiKeyInUrl);
  const openapi = buildOpenApiDocument();
  app.get('/openapi.json', (_req, res) => void res.json(openapi));
  app.use(healthRoutes(deps));
  app.use(consoleRoutes());
  // Terra signs its deliveries instead of holding an API key, so its receiver sits outside /v1.
  if (deps.terraReceiver) app.use(terraReceiverRoutes({ ...deps.terraReceiver, pool: deps.pool, logger: deps.logger }));
  // The key is checked before a byte of the body is read: a caller without one is answered at once,
  // however slowly it sends, and never makes the API buffer or parse anything. Only /v1 takes a JSON
  // body: anywhere else a body is never read, whoever sends it. Each route still says which media types
  // it takes (a 415 for any other).
  app.use('/v1', requireApiKey(deps.pool), jsonBodies(deps.bodyLimitBytes));
  app.use(turnRoutes(deps));
  app.use(findingRoutes(deps));
  app.use(memoryRoutes(deps));
  app.use(dataRoutes(deps));
  app.use(accountRoutes(deps));
  app.use((req, _res, next) => next(new ApiError('not_found', `No route for ${req.method} ${req.path}.`)));
  app.use(errorMiddleware(deps.logger));
  return app;
}
