/**
 * Every string a client sends, spelled as a property that every JavaScript object inherits (`constructor`,
 * `toString`, `__proto__`, …). Looked up in a plain object, such a name finds the inherited property, not
 * `undefined`: a lab unit spelled `constructor` was a 500. The service must answer each either as it answers any
 * other unknown value (the documented 400 envelope, or a 404) or, where the name is a legitimate value (a
 * workout's external_id, a memory's text), with the normal success; never a 5xx.
 *
 * The operations come from the service's own OpenAPI document, and each name goes in every string position of
 * every operation: its path parameters, its query parameters (and a query parameter of that name), its header
 * parameters and the headers every route reads, a header of that name, and in its example body every string
 * value and a key beside every object's own. The example bodies are valid (checked first), so each mutation
 * differs from an accepted request by that one string: a lab unit reaches the unit conversion, a FHIR code the
 * LOINC table. The real service: the compiled API and worker, Postgres and Temporal. While the probes run the
 * worker is stopped, so that the turns they start stay queued; then turns whose message is such a name are run
 * through the whole pipeline, which reads the message's words.
 */
import { ERROR_STATUS, errorEnvelopeSchema } from '../../contracts/errors';
import { api, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { nowSeconds, terraSignature, TERRA_TEST_SECRET } from '../support/terra-delivery';
import { terraExample } from '../support/terra-fixtures';

jest.setTimeout(600_000);

/** Object.prototype's own names (`__proto__`, `constructor`, `hasOwnProperty`, `__defineGetter__`…) and `prototype`. */
const INHERITED_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * Lab results reach two tables by their unit: TSH's spellings of its own (`mU/L`) and the UCUM library's units,
 * which converts LDL's mmol/L. A bundle's unit is read from its UCUM code, or else from its human-readable unit.
 */
const TSH_LOINC = '3016-3';
const LDL_LOINC = '13457-7';
const observation = (loinc: string, valueQuantity: Json, day: string) => ({
  resource: {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: loinc }] },
    valueQuantity,
    effectiveDateTime: day,
  },
});
const fhirBundle = {
  resourceType: 'Bundle',
  type: 'collection',
  entry: [
    observation(
      TSH_LOINC,
      { value: 2.1, unit: 'mU/L', system: 'http://unitsofmeasure.org', code: 'mU/L' },
      '2025-03-04T08:30:00+01:00',
    ),
    observation(TSH_LOINC, { value: 1.9, unit: 'mU/L' }, '2025-06-04'),
    observation(LDL_LOINC, { value: 3.36, unit: 'mmol/L' }, '2025-06-04'),
  ],
};

/** A valid body for each operation and content type of the document that takes one. */
const EXAMPLE_BODIES: Record<string, Json> = {
  'createTurn application/json': {
    messages: [{ role: 'user', content: 'thanks!' }],
    stream: true,
    context: { include_memory: true, include_biomarkers: true },
  },
  'createMemory application/json': {
    text: 'Prefers morning workouts.',
    category: 'preference',
    confidence: 0.9,
    meta: { source: 'app' },
  },
  'upsertDaily application/json': { rows: [{ date: '2025-03-04', steps: 8000, sleep_minutes: 420 }] },
  'upsertWorkouts application/json': {
    rows: [{ external_id: 'w-1', date: '2025-03-04', type: 'yoga', duration_minutes: 30 }],
  },
  'upsertLabs application/json': {
    rows: [
      { date: '2025-03-04', biomarker: 'tsh', value: 2.1, unit: 'mU/L' },
      { date: '2025-03-04', biomarker: 'ldl_cholesterol', value: 3.36, unit: 'mmol/L' },
    ],
  },
  'upsertLabs application/fhir+json': fhirBundle,
  'putProfile application/json': { sex: 'female', birth_year: 1990, height_cm: 170, weight_kg: 65 },
  // Its request id is replaced by that of a turn waiting for an answer when the example is sent (waitingTurn).
  'answerTurnInput application/json': { request_id: 'inq_0123456789abcdef0123456789abcdef', option_id: 'scan' },
  // Terra's own example of a daily event (test/fixtures/terra), sent signed as Terra signs it.
  'receiveTerraEvent application/json': terraExample('daily'),
};
/** A FHIR bundle is also accepted as plain JSON (told apart by its resourceType): that way in too. */
const FHIR_AS_JSON = 'upsertLabs application/json (a FHIR bundle)';

/** Valid values of the query parameters, so that a required one is present while another is fuzzed. */
const QUERY_VALUES: Record<string, string> = { from: '2025-01-01', to: '2025-12-31' };

interface Operation {
  operationId: string;
  method: string;
  template: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean }>;
  bodyTypes: string[];
}

interface Probe {
  /** What the probe changed, for the failure list: `query status`, `body rows[0].unit`. */
  position: string;
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

let svc: TestService;
let apiKey: string;
let turnId: string;
let operations: Operation[];

beforeAll(async () => {
  // Turns whose message is such a name are started too: enough room that none is refused for the caps.
  svc = await startTestService({
    env: { AMY_MAX_INFLIGHT_TURNS: '1000', AMY_MAX_TURNS_PER_MINUTE: '10000', TERRA_SIGNING_SECRET: TERRA_TEST_SECRET },
  });
  ({ apiKey } = await svc.createUser('prototype-names'));
  const turn = await api(svc.url, 'POST', '/v1/turns', { key: apiKey, body: { ...thanks, stream: false } });
  expect(turn.body.status).toBe('completed');
  turnId = turn.body.id;
  const doc = (await api(svc.url, 'GET', '/openapi.json')).body;
  operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([template, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({
      operationId: operation.operationId,
      method: method.toUpperCase(),
      template,
      parameters: operation.parameters ?? [],
      bodyTypes: Object.keys(operation.requestBody?.content ?? {}),
    })),
  );
});

afterAll(async () => {
  if (svc) {
    // The turns the probes started may still run: end them, so that the worker stops at once.
    const running = await svc.database.pool.query<{ id: string }>(
      "SELECT id FROM turns WHERE status IN ('queued', 'running')",
    );
    await Promise.allSettled(running.rows.map(({ id }) => svc.temporal.workflow.getHandle(id).terminate('fuzz over')));
    await svc.close();
  }
});

/** The operation's path with `values` for its parameters; the others as a real turn, finding and record name them. */
/** A turn that asked its user a question (docs/api.md#asking-back) and waits for the answer. */
async function waitingTurn(): Promise<{ turnId: string; requestId: string }> {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: apiKey,
    body: {
      messages: [{ role: 'user', content: 'Is there anything in my numbers worth knowing?' }],
      interaction: { accepts: ['confirmation'] },
    },
  });
  const id = created.body.id as string;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const turn = await api(svc.url, 'GET', `/v1/turns/${id}`, { key: apiKey });
    if (turn.body.pending_input) return { turnId: id, requestId: turn.body.pending_input.request_id as string };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the turn never asked');
}

function pathOf(template: string, values: Record<string, string> = {}): string {
  const real: Record<string, string> = { id: turnId, finding_id: 'ds-001', external_id: 'w-1' };
  return template.replace(/\{(\w+)\}/g, (_, param: string) =>
    encodeURIComponent(Object.hasOwn(values, param) ? values[param]! : real[param]!),
  );
}

/** The required query parameters with valid values. */
function baseQuery(op: Operation): Record<string, string> {
  return Object.fromEntries(
    op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, QUERY_VALUES[p.name]!]),
  );
}

const withQuery = (path: string, query: Record<string, string>) => {
  const search = new URLSearchParams(Object.entries(query)).toString();
  return search ? `${path}?${search}` : path;
};

/** Copies of `value` with `name` in each string position: each string replaced, and a key beside each object's. */
function bodyVariants(value: Json, name: string, at = ''): Array<{ position: string; body: Json }> {
  const variants: Array<{ position: string; body: Json }> = [];
  const rebuild = (replace: (copy: Json) => void) => {
    const copy = structuredClone(value);
    replace(copy);
    return copy;
  };
  if (typeof value === 'string') return [{ position: at || '(the body)', body: name }];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      for (const inner of bodyVariants(item, name, `${at}[${i}]`)) {
        variants.push({ position: inner.position, body: rebuild((copy) => (copy[i] = inner.body)) });
      }
    });
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      for (const inner of bodyVariants(value[key], name, at ? `${at}.${key}` : key)) {
        variants.push({ position: inner.position, body: rebuild((copy) => (copy[key] = inner.body)) });
      }
    }
    // An own property, even for `__proto__` (an assignment would set the prototype, and JSON would not show it).
    const withKey = rebuild((copy) =>
      Object.defineProperty(copy, name, { value: 'x', enumerable: true, configurable: true, writable: true }),
    );
    variants.push({ position: `${at || '(the body)'} key`, body: withKey });
  }
  return variants;
}

/** Every probe of one operation for one name, sent with `key`. */
function probesOf(op: Operation, name: string, key: string): Probe[] {
  const auth = { authorization: `Bearer ${key}` };
  const query = baseQuery(op);
  const path = withQuery(pathOf(op.template), query);
  const bodies = op.bodyTypes.flatMap((type) => [
    { key: `${op.operationId} ${type}`, type, valid: EXAMPLE_BODIES[`${op.operationId} ${type}`] },
    ...(op.operationId === 'upsertLabs' && type === 'application/json'
      ? [{ key: FHIR_AS_JSON, type, valid: fhirBundle }]
      : []),
  ]);
  // A probe of the path, the query or the headers sends the operation's valid body, if it takes one.
  const example = bodies[0];
  const probe = (position: string, at: string, headers: Record<string, string>): Probe => ({
    position,
    name,
    method: op.method,
    path: at,
    headers: example ? { 'content-type': example.type, ...headers } : headers,
    ...(example ? { body: JSON.stringify(example.valid) } : {}),
  });
  const probes: Probe[] = op.parameters.map((param) => {
    if (param.in === 'path') {
      return probe(`path ${param.name}`, withQuery(pathOf(op.template, { [param.name]: name }), query), auth);
    }
    if (param.in === 'query') {
      return probe(`query ${param.name}`, withQuery(pathOf(op.template), { ...query, [param.name]: name }), auth);
    }
    return probe(`header ${param.name}`, path, { ...auth, [param.name]: name });
  });
  probes.push(
    probe('a query parameter of that name', withQuery(pathOf(op.template), { ...query, [name]: 'x' }), auth),
    probe('a header of that name', path, { ...auth, [name]: 'x' }),
    probe('header Accept', path, { ...auth, accept: name }),
    probe('header Authorization', path, { authorization: `Bearer ${name}` }),
  );
  for (const { key: what, type, valid } of bodies) {
    probes.push({ ...probe(`${what}: header Content-Type`, path, auth), headers: { ...auth, 'content-type': name } });
    for (const variant of bodyVariants(valid, name)) {
      probes.push({
        ...probe(`${what}: body ${variant.position}`, path, { ...auth, 'content-type': type }),
        body: JSON.stringify(variant.body),
      });
    }
  }
  return probes;
}

/** The probe's status, and why its answer breaks the contract, if it does. */
async function send(probe: Probe): Promise<{ status: number; problem?: string }> {
  const res = await fetch(`${svc.url}${probe.path}`, {
    method: probe.method,
    headers: probe.headers,
    body: probe.body,
    signal: AbortSignal.timeout(60_000),
  });
  // An event stream of a finished turn ends after its replay; read whole, like every other answer.
  const text = await res.text();
  if (res.status >= 500) return { status: res.status, problem: `${res.status}: ${text.slice(0, 200)}` };
  if (res.status < 400) return { status: res.status };
  let envelope: ReturnType<typeof errorEnvelopeSchema.safeParse>;
  try {
    envelope = errorEnvelopeSchema.safeParse(JSON.parse(text));
  } catch {
    return { status: res.status, problem: `${res.status} without a JSON body: ${text.slice(0, 200)}` };
  }
  if (!envelope.success)
    return { status: res.status, problem: `${res.status} not in the envelope: ${text.slice(0, 200)}` };
  const { code } = envelope.data.error;
  if (!Object.hasOwn(ERROR_STATUS, code) || ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== res.status) {
    return { status: res.status, problem: `${res.status} with code ${code}, which the document gives another status` };
  }
  return { status: res.status };
}

test('the document’s operations are all covered, and every example body is accepted as it is', async () => {
  const withBodies = operations.flatMap((op) => op.bodyTypes.map((type) => `${op.operationId} ${type}`));
  expect(withBodies.sort()).toEqual(Object.keys(EXAMPLE_BODIES).sort());
  const examples = operations.flatMap((op) =>
    op.bodyTypes.map((type) => ({ op, type, body: EXAMPLE_BODIES[`${op.operationId} ${type}`] })),
  );
  const upsertLabs = operations.find((op) => op.operationId === 'upsertLabs')!;
  examples.push({ op: upsertLabs, type: 'application/json', body: fhirBundle });
  for (const { op, type, body: example } of examples) {
    // An answer is only taken by a turn waiting for one: the example goes to such a turn, with its request id.
    const waiting = op.operationId === 'answerTurnInput' ? await waitingTurn() : null;
    const body = waiting ? { ...(example as object), request_id: waiting.requestId } : example;
    const rawBody = JSON.stringify(body);
    // Terra's receiver takes no key but Terra's signature: the example is signed, every probe of it is not (401).
    const signed: Record<string, string> =
      op.operationId === 'receiveTerraEvent' ? { 'terra-signature': terraSignature(rawBody, nowSeconds()) } : {};
    const path = waiting ? op.template.replace('{id}', waiting.turnId) : pathOf(op.template);
    const res = await api(svc.url, op.method, withQuery(path, baseQuery(op)), {
      key: apiKey,
      rawBody,
      headers: { 'content-type': type, ...signed },
    });
    expect([op.operationId, type, res.status < 300]).toEqual([op.operationId, type, true]);
  }
});

describe('the HTTP surface', () => {
  // What the API answers is the subject here: the turns the probes start stay queued, and the machine quiet.
  beforeAll(() => svc.stopWorker());
  afterAll(async () => {
    const queued = await svc.database.pool.query<{ id: string }>(
      "SELECT id FROM turns WHERE status IN ('queued', 'running')",
    );
    await Promise.allSettled(queued.rows.map(({ id }) => svc.temporal.workflow.getHandle(id).terminate('probed')));
    await svc.startWorker();
  });

  test.each(INHERITED_NAMES)(
    '%s in every string position of every operation: no 5xx, and every refusal in the envelope',
    async (name) => {
      const problems: string[] = [];
      for (const op of operations) {
        // Deleting the account ends every later request of its user: a user of its own for each name.
        const key = op.operationId === 'deleteAccount' ? (await svc.createUser()).apiKey : apiKey;
        for (const probe of probesOf(op, name, key)) {
          const { problem } = await send(probe);
          if (problem) problems.push(`${op.method} ${op.template} — ${probe.position}: ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    },
  );
});

test('a memory’s meta keeps keys spelled like inherited properties, and refuses __proto__, which it could not keep', async () => {
  const meta = Object.fromEntries(INHERITED_NAMES.filter((name) => name !== '__proto__').map((name) => [name, name]));
  const created = await api(svc.url, 'POST', '/v1/memory', {
    key: apiKey,
    body: { text: 'Walks to work.', category: 'history', meta },
  });
  expect(created.status).toBe(201);
  expect(created.body.meta).toEqual(meta);
  const listed = await api(svc.url, 'GET', '/v1/memory?category=history', { key: apiKey });
  expect(listed.body.data.find((m: { id: string }) => m.id === created.body.id)?.meta).toEqual(meta);

  const refused = await api(svc.url, 'POST', '/v1/memory', {
    key: apiKey,
    rawBody: '{"text":"Walks to work.","category":"history","meta":{"__proto__":{"a":1},"b":2}}',
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatchObject({ code: 'invalid_field', field: 'meta.__proto__' });
});

test.each(INHERITED_NAMES)('a turn whose message is %s is answered', async (name) => {
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: apiKey,
    body: { messages: [{ role: 'user', content: name }], stream: false },
  });
  expect([res.status, res.body.status, res.body.error]).toEqual([200, 'completed', null]);
});
