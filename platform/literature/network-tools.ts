/**
 * The network tools' clients as the worker builds them from configuration: PubMed always, Data Commons with a key,
 * sharing one deployment-wide rate limiter and result cache (Postgres) and one circuit breaker per process.
 */
import type { Pool } from 'pg';
import type { Config } from '../config';
import { createPgToolResultCache } from './cache';
import { createCircuitBreaker, type CircuitBreaker } from './circuit';
import { createDataCommonsClient, type DataCommonsClient } from './data-commons';
import { createPubMedClient, type PubMedClient } from './pubmed';
import { createPgRateLimiter } from './rate-limit';

/** Five failures in a row open a host's circuit for a minute: long enough for an outage, short for a blip. */
const CIRCUIT = { failureThreshold: 5, coolDownMs: 60_000 };

/** The Messages API's server tools the Domain Expert may be offered (AMY_DE_WEB_TOOLS). */
export type WebToolName = 'web_search' | 'web_fetch';

/**
 * The server tools as configured. The Messages API runs them, so there is no client here: only which are offered,
 * the domains they may use, and a circuit (keyed by tool name) that stops offering one whose results keep failing.
 */
export interface WebToolSettings {
  tools: readonly WebToolName[];
  allowedDomains: readonly string[];
  circuit: CircuitBreaker;
}

/** The clients the Domain Expert's network tools call (activities/agents/domain-expert/network-tools.ts). */
export interface NetworkTools {
  pubmed: PubMedClient;
  /** Null without a Data Commons key: the tool is then not offered. */
  dataCommons: DataCommonsClient | null;
  /**
   * The Messages API's web search and fetch (activities/agents/domain-expert/web-tools.ts); null when
   * AMY_DE_WEB_TOOLS names none.
   */
  web?: WebToolSettings | null;
}

export function createNetworkToolClients(
  pool: Pool,
  config: Pick<
    Config,
    | 'NCBI_EUTILS_URL'
    | 'NCBI_TOOL'
    | 'NCBI_EMAIL'
    | 'NCBI_API_KEY'
    | 'DATA_COMMONS_URL'
    | 'DATA_COMMONS_API_KEY'
    | 'AMY_DE_NETWORK_TIMEOUT_MS'
    | 'AMY_DE_WEB_TOOLS'
    | 'AMY_DE_WEB_DOMAINS'
  >,
): Required<NetworkTools> {
  const limiter = createPgRateLimiter(pool);
  const cache = createPgToolResultCache(pool);
  const circuit = createCircuitBreaker(CIRCUIT);
  const timeoutMs = config.AMY_DE_NETWORK_TIMEOUT_MS;
  return {
    pubmed: createPubMedClient({
      baseUrl: config.NCBI_EUTILS_URL,
      tool: config.NCBI_TOOL,
      email: config.NCBI_EMAIL ?? '',
      ...(config.NCBI_API_KEY ? { apiKey: config.NCBI_API_KEY } : {}),
      limiter,
      cache,
      circuit,
      timeoutMs,
    }),
    dataCommons: config.DATA_COMMONS_API_KEY
      ? createDataCommonsClient({
          baseUrl: config.DATA_COMMONS_URL,
          apiKey: config.DATA_COMMONS_API_KEY,
          limiter,
          cache,
          circuit,
          timeoutMs,
        })
      : null,
    web:
      config.AMY_DE_WEB_TOOLS.length > 0
        ? { tools: config.AMY_DE_WEB_TOOLS, allowedDomains: config.AMY_DE_WEB_DOMAINS, circuit }
        : null,
  };
}
