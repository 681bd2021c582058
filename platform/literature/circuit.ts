/**
 * A circuit breaker per host, held in the worker's memory: after `failureThreshold` consecutive failures
 * that say the host is unhealthy, the circuit opens and every call fails fast with CircuitOpenError for
 * `coolDownMs`, so a turn does not spend its tool budget waiting on a host that is down and the host is not
 * hammered while it recovers. After the cool-down the circuit is half-open: one call goes through as a
 * probe (others still fail fast); its success closes the circuit, its failure opens it for another
 * cool-down.
 *
 * Per process, not per deployment: each worker finds out on its own, which costs at most
 * `failureThreshold` failed calls per worker, and needs no shared state that could itself fail.
 */
import { CircuitOpenError, NetworkToolError, type NetworkToolService } from './errors';

type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  failureThreshold: number;
  coolDownMs: number;
  now?: () => number;
}

export interface CircuitBreaker {
  /** Runs `call` unless the host's circuit is open; its outcome updates the circuit. */
  run<T>(service: NetworkToolService, host: string, call: () => Promise<T>): Promise<T>;
  state(host: string): CircuitState;
  /**
   * The outcome of a call made elsewhere, for a host whose calls do not go through `run`: a server tool that the
   * Messages API runs, whose failure we learn from its result block. Counts as `run` would count it.
   */
  report(host: string, healthy: boolean): void;
}

interface HostCircuit {
  consecutiveFailures: number;
  /** When the circuit opened; null while closed. */
  openedAt: number | null;
  probeInFlight: boolean;
}

/**
 * Only failures that say the host is unhealthy count: a timeout, a 429, a 5xx, a refused connection, a
 * malformed body. A request the host refused (4xx) is the request's fault, and anything that is not a
 * NetworkToolError is a bug on our side.
 */
const countsAgainstHost = (err: unknown) => err instanceof NetworkToolError && err.countsAgainstHost;

export function createCircuitBreaker({
  failureThreshold,
  coolDownMs,
  now = Date.now,
}: CircuitBreakerOptions): CircuitBreaker {
  if (!Number.isInteger(failureThreshold) || failureThreshold < 1) {
    throw new RangeError('failureThreshold must be a positive integer');
  }
  const circuits = new Map<string, HostCircuit>();
  const circuitOf = (host: string): HostCircuit => {
    let circuit = circuits.get(host);
    if (!circuit) {
      circuit = { consecutiveFailures: 0, openedAt: null, probeInFlight: false };
      circuits.set(host, circuit);
    }
    return circuit;
  };
  const stateOf = (circuit: HostCircuit): CircuitState => {
    if (circuit.openedAt === null) return 'closed';
    return now() - circuit.openedAt >= coolDownMs ? 'half_open' : 'open';
  };

  return {
    state: (host) => stateOf(circuitOf(host)),
    report(host, healthy) {
      const circuit = circuitOf(host);
      if (healthy) {
        circuit.consecutiveFailures = 0;
        circuit.openedAt = null;
        return;
      }
      circuit.consecutiveFailures += 1;
      const probing = stateOf(circuit) === 'half_open';
      if (probing || circuit.consecutiveFailures >= failureThreshold) circuit.openedAt = now();
    },
    async run(service, host, call) {
      const circuit = circuitOf(host);
      const state = stateOf(circuit);
      if (state === 'open' || (state === 'half_open' && circuit.probeInFlight)) {
        const remaining = state === 'open' ? coolDownMs - (now() - (circuit.openedAt ?? 0)) : coolDownMs;
        throw new CircuitOpenError(service, host, Math.max(0, remaining));
      }
      const isProbe = state === 'half_open';
      if (isProbe) circuit.probeInFlight = true;
      try {
        const result = await call();
        circuit.consecutiveFailures = 0;
        circuit.openedAt = null;
        return result;
      } catch (err) {
        if (countsAgainstHost(err)) {
          circuit.consecutiveFailures += 1;
          if (isProbe || circuit.consecutiveFailures >= failureThreshold) circuit.openedAt = now();
        } else if (isProbe) {
          // The probe reached a host that answered (a 4xx): it is up.
          circuit.consecutiveFailures = 0;
          circuit.openedAt = null;
        }
        throw err;
      } finally {
        if (isProbe) circuit.probeInFlight = false;
      }
    },
  };
}
