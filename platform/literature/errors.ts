/**
 * How a network tool call fails, as a class per cause, so the Domain Expert's tool loop can turn each into
 * a tool error the model can work around (wait, narrow the request, fall back to the offline priors) and
 * the circuit breaker can tell an unhealthy host from a request the host refused.
 *
 * A message names the service and its host, never the query or the URL: both carry the topic the model
 * chose, and a message travels to logs, spans and Temporal failures (ARCHITECTURE.md, invariant 8).
 */

/** The outside services the network tools call, by the name a message gives them. */
export type NetworkToolService = 'PubMed' | 'Data Commons';

export abstract class NetworkToolError extends Error {
  /** Whether the same request may succeed later (a timeout, a 429, a 5xx), as opposed to never. */
  abstract readonly retryable: boolean;
  /** Whether the failure says the host is unhealthy, so it counts towards opening its circuit. */
  abstract readonly countsAgainstHost: boolean;

  constructor(
    readonly service: NetworkToolService,
    readonly host: string,
    message: string,
  ) {
    super(message);
  }
}

export class ToolTimeoutError extends NetworkToolError {
  override name = 'ToolTimeoutError';
  readonly retryable = true;
  readonly countsAgainstHost = true;

  constructor(service: NetworkToolService, host: string, timeoutMs: number) {
    super(service, host, `${service} (${host}) did not answer within ${timeoutMs} ms`);
  }
}

/** 429: the host's own limit, despite ours (another deployment sharing the address, or a lower limit). */
export class ToolRateLimitedError extends NetworkToolError {
  override name = 'ToolRateLimitedError';
  readonly retryable = true;
  readonly countsAgainstHost = true;

  constructor(
    service: NetworkToolService,
    host: string,
    /** From Retry-After when the host sent one. */
    readonly retryAfterMs: number | null,
  ) {
    super(
      service,
      host,
      `${service} (${host}) is rate limiting requests` +
        (retryAfterMs === null ? '' : `; retry after ${Math.ceil(retryAfterMs / 1000)} s`),
    );
  }
}

/** A 5xx, or no HTTP answer at all (DNS, a refused or reset connection). */
export class ToolUnavailableError extends NetworkToolError {
  override name = 'ToolUnavailableError';
  readonly retryable = true;
  readonly countsAgainstHost = true;

  constructor(
    service: NetworkToolService,
    host: string,
    /** null: the connection failed before any status. */
    readonly status: number | null,
  ) {
    super(
      service,
      host,
      status === null ? `${service} (${host}) could not be reached` : `${service} (${host}) failed with HTTP ${status}`,
    );
  }
}

/** A 2xx whose body is not the published format: the host is misbehaving, so it counts against it. */
export class ToolMalformedResponseError extends NetworkToolError {
  override name = 'ToolMalformedResponseError';
  readonly retryable = true;
  readonly countsAgainstHost = true;

  constructor(service: NetworkToolService, host: string, what: string) {
    super(service, host, `${service} (${host}) answered in an unexpected format: ${what}`);
  }
}

/**
 * The host (a 4xx other than 429) or the client itself refused the request: retrying it unchanged is
 * pointless, and a healthy host refusing a bad request says nothing about the host's health.
 */
export class ToolRequestRefusedError extends NetworkToolError {
  override name = 'ToolRequestRefusedError';
  readonly retryable = false;
  readonly countsAgainstHost = false;

  constructor(
    service: NetworkToolService,
    host: string,
    readonly status: number | null,
    reason: string,
  ) {
    super(service, host, `${service} (${host}) refused the request: ${reason}`);
  }
}

/** The host's circuit is open (./circuit.ts): the call failed fast, without a request. */
export class CircuitOpenError extends NetworkToolError {
  override name = 'CircuitOpenError';
  readonly retryable = true;
  readonly countsAgainstHost = false;

  constructor(
    service: NetworkToolService,
    host: string,
    readonly retryAfterMs: number,
  ) {
    super(
      service,
      host,
      `${service} (${host}) failed repeatedly and is paused for ${Math.ceil(retryAfterMs / 1000)} s`,
    );
  }
}
