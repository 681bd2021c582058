/** platform/literature/circuit.ts: opens after N consecutive host failures, fails fast, probes once when half-open. */
import { createCircuitBreaker } from '../../platform/literature/circuit';
import { CircuitOpenError, ToolRequestRefusedError, ToolUnavailableError } from '../../platform/literature/errors';

const HOST = 'eutils.example';
const down = () => Promise.reject(new ToolUnavailableError('PubMed', HOST, 503));
const refused = () => Promise.reject(new ToolRequestRefusedError('PubMed', HOST, 400, 'HTTP 400'));
const up = () => Promise.resolve('ok');

function breaker() {
  let now = 1_000_000;
  const circuit = createCircuitBreaker({ failureThreshold: 3, coolDownMs: 10_000, now: () => now });
  return { circuit, advance: (ms: number) => (now += ms) };
}

test('opens after the threshold of consecutive failures and then fails fast without calling', async () => {
  const { circuit } = breaker();
  for (let i = 0; i < 3; i++)
    await expect(circuit.run('PubMed', HOST, down)).rejects.toBeInstanceOf(ToolUnavailableError);
  expect(circuit.state(HOST)).toBe('open');
  const call = jest.fn(up);
  const error = await circuit.run('PubMed', HOST, call).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(CircuitOpenError);
  expect((error as CircuitOpenError).retryAfterMs).toBe(10_000);
  expect(call).not.toHaveBeenCalled();
  expect(circuit.state('other.example')).toBe('closed');
});

test('a success in between resets the count; a refused request does not count', async () => {
  const { circuit } = breaker();
  await expect(circuit.run('PubMed', HOST, down)).rejects.toThrow();
  await expect(circuit.run('PubMed', HOST, down)).rejects.toThrow();
  await circuit.run('PubMed', HOST, up);
  await expect(circuit.run('PubMed', HOST, down)).rejects.toThrow();
  await expect(circuit.run('PubMed', HOST, refused)).rejects.toThrow();
  await expect(circuit.run('PubMed', HOST, refused)).rejects.toThrow();
  await expect(circuit.run('PubMed', HOST, down)).rejects.toThrow();
  expect(circuit.state(HOST)).toBe('closed');
});

test('half-open after the cool-down: one probe; its failure reopens, its success closes', async () => {
  const { circuit, advance } = breaker();
  for (let i = 0; i < 3; i++) await expect(circuit.run('PubMed', HOST, down)).rejects.toThrow();
  advance(9_999);
  expect(circuit.state(HOST)).toBe('open');
  advance(1);
  expect(circuit.state(HOST)).toBe('half_open');
  await expect(circuit.run('PubMed', HOST, down)).rejects.toBeInstanceOf(ToolUnavailableError);
  expect(circuit.state(HOST)).toBe('open');
  advance(10_000);
  let release!: () => void;
  const probe = circuit.run('PubMed', HOST, () => new Promise<string>((resolve) => (release = () => resolve('ok'))));
  // While the probe is out, others still fail fast.
  await expect(circuit.run('PubMed', HOST, up)).rejects.toBeInstanceOf(CircuitOpenError);
  release();
  await expect(probe).resolves.toBe('ok');
  expect(circuit.state(HOST)).toBe('closed');
});
