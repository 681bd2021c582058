/**
 * Lab results through the Health data API (docs/api.md#lab-results) and the SDK, over real HTTP against a
 * real database: rows and FHIR R4 bundles stored in each biomarker's canonical unit, the upsert by biomarker
 * and day, pages and deletion by range, every refusal a 400 naming the row and field (or the bundle path)
 * that stores nothing (read back to prove it) and never quotes the value, and one user's labs invisible to
 * another.
 */
import { Amy, APIError, type FhirBundle, type LabResult, type LabResultInput } from '@amy/sdk';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { MAX_DATA_ROWS_PER_REQUEST, labResultListSchema, upsertResultSchema } from '../../contracts/data';
import { formatIsoDate } from '../../contracts/health-records';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let alice: Amy;
let bob: Amy;
let aliceKey: string;

beforeAll(async () => {
  svc = await startTestService();
  const a = await svc.createUser('alice');
  const b = await svc.createUser('bob');
  aliceKey = a.apiKey;
  alice = new Amy({ apiKey: a.apiKey, baseUrl: svc.url, maxRetries: 0 });
  bob = new Amy({ apiKey: b.apiKey, baseUrl: svc.url, maxRetries: 0 });
});
afterAll(async () => {
  await svc?.close();
});

/** The day `offset` days from today in UTC (negative: in the past). */
const day = (offset: number) => formatIsoDate(new Date(Date.now() + offset * 86_400_000));

async function allLabs(client: Amy, params: Parameters<Amy['data']['labs']['list']>[0] = {}): Promise<LabResult[]> {
  const labs: LabResult[] = [];
  for await (const lab of client.data.labs.list(params)) labs.push(lab);
  return labs;
}

/** The refusal of a call, which must be the envelope's `400 invalid_field` naming `field`. */
async function refusal(call: PromiseLike<unknown>, field: string) {
  const err = await Promise.resolve(call).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  const apiError = err as APIError;
  expect({ status: apiError.status, code: apiError.code, field: apiError.field }).toEqual({
    status: 400,
    code: 'invalid_field',
    field,
  });
  return apiError;
}

const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';

/** A final, LOINC-coded Observation of a value in a UCUM unit, taken on `date`. */
const observation = (loinc: string, value: number, unit: string, date: string) => ({
  resource: {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: LOINC, code: loinc }] },
    valueQuantity: { value, unit, system: UCUM, code: unit },
    effectiveDateTime: `${date}T08:30:00+01:00`,
  },
});
const bundle = (...entry: unknown[]): FhirBundle => ({ resourceType: 'Bundle', type: 'collection', entry });

const ldl = (values: Partial<LabResultInput> = {}): LabResultInput => ({
  date: day(-30),
  biomarker: 'ldl_cholesterol',
  value: 131,
  unit: 'mg/dL',
  ...values,
});

describe('storing lab results', () => {
  test('LDL in mg/dL is stored as sent, with its LOINC code and canonical unit', async () => {
    expect(await alice.data.labs.upsert([ldl()])).toEqual({ inserted: 1, updated: 0 });
    const page = await alice.data.labs.list();
    expectSchema(labResultListSchema, { data: page.data, next_cursor: page.next_cursor, has_more: page.has_more });
    expect(page.data).toEqual([
      { date: day(-30), biomarker: 'ldl_cholesterol', value: 131, unit: 'mg/dL', loinc: '13457-7' },
    ]);
  });

  test('LDL in mmol/L is stored converted to mg/dL (3.36 mmol/L is about 129.9 mg/dL)', async () => {
    await alice.data.labs.upsert([ldl({ date: day(-29), value: 3.36, unit: 'mmol/L' })]);
    const [stored] = await allLabs(alice, { from: day(-29), to: day(-29) });
    expect(stored).toMatchObject({ date: day(-29), biomarker: 'ldl_cholesterol', unit: 'mg/dL' });
    expect(stored.value).toBeCloseTo(129.91, 2);
  });

  test('the same biomarker on the same day again replaces the value; another biomarker is another row', async () => {
    expect(
      await alice.data.labs.upsert([
        ldl({ value: 140 }),
        { date: day(-30), biomarker: 'hba1c', value: 5.4, unit: '%' },
      ]),
    ).toEqual({ inserted: 1, updated: 1 });
    expect(await allLabs(alice, { from: day(-30), to: day(-30) })).toEqual([
      { date: day(-30), biomarker: 'hba1c', value: 5.4, unit: '%', loinc: '4548-4' },
      { date: day(-30), biomarker: 'ldl_cholesterol', value: 140, unit: 'mg/dL', loinc: '13457-7' },
    ]);
  });

  test('a FHIR bundle with two Observations is stored as two rows, in canonical units', async () => {
    const result = await alice.data.labs.upsert(
      bundle(observation('22748-8', 3.1, 'mmol/L', day(-20)), observation('2345-7', 5.2, 'mmol/L', day(-20))),
    );
    expect(result).toEqual({ inserted: 2, updated: 0 });
    const stored = await allLabs(alice, { from: day(-20), to: day(-20) });
    expect(stored.map(({ biomarker, unit, loinc }) => ({ biomarker, unit, loinc }))).toEqual([
      { biomarker: 'fasting_glucose', unit: 'mg/dL', loinc: '1558-6' },
      { biomarker: 'ldl_cholesterol', unit: 'mg/dL', loinc: '13457-7' },
    ]);
    expect(stored[0].value).toBeCloseTo(93.68, 2);
    expect(stored[1].value).toBeCloseTo(119.86, 2);
  });

  test('a bundle sent as application/fhir+json is read too', async () => {
    const res = await api(svc.url, 'POST', '/v1/data/labs', {
      key: aliceKey,
      rawBody: JSON.stringify(bundle(observation('2085-9', 1.4, 'mmol/L', day(-19)))),
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect(res.status).toBe(200);
    expect(expectSchema(upsertResultSchema, res.body)).toEqual({ inserted: 1, updated: 0 });
    const [hdl] = await allLabs(alice, { biomarker: 'hdl_cholesterol' });
    expect(hdl).toMatchObject({ date: day(-19), unit: 'mg/dL', loinc: '2085-9' });
    expect(hdl.value).toBeCloseTo(54.13, 2);
  });

  test('two requests racing to store the same biomarker and day both succeed, and one value stands', async () => {
    const racing = [4.1, 4.2, 4.3].map((value) =>
      alice.data.labs.upsert([{ date: day(-60), biomarker: 'tsh', value, unit: 'mIU/L' }]),
    );
    const results = await Promise.all(racing);
    expect(results.reduce((sum, r) => sum + r.inserted, 0)).toBe(1);
    const stored = await allLabs(alice, { biomarker: 'tsh', from: day(-60), to: day(-60) });
    expect(stored.length).toBe(1);
    expect([4.1, 4.2, 4.3]).toContain(stored[0].value);
    expect(await alice.data.labs.delete({ from: day(-60), to: day(-60) })).toBe(1);
  });
});

describe('what is refused stores nothing', () => {
  test.each<[string, LabResultInput[], string]>([
    ['an unknown unit', [ldl({ date: day(-5) }), ldl({ date: day(-4), unit: 'mg/dk' })], 'rows[1].unit'],
    ['an inconvertible unit', [ldl({ date: day(-5), unit: 'mmol/mol' })], 'rows[0].unit'],
    [
      'a molar unit for a biomarker without a molar mass',
      [{ ...ldl(), biomarker: 'ferritin', unit: 'nmol/L' }],
      'rows[0].unit',
    ],
    [
      'an unknown biomarker',
      [ldl({ date: day(-5) }), { ...ldl(), biomarker: 'cortisol' as never }],
      'rows[1].biomarker',
    ],
    ['an implausible value', [ldl({ date: day(-5), value: 131, unit: 'mmol/L' })], 'rows[0].value'],
    ['a negative value', [ldl({ date: day(-5), value: -1 })], 'rows[0].value'],
    ['a future date', [ldl({ date: day(-5) }), ldl({ date: day(1) })], 'rows[1].date'],
    ['an impossible date', [ldl({ date: '2025-02-30' })], 'rows[0].date'],
    [
      'the same biomarker and date twice',
      [ldl({ date: day(-5) }), ldl({ date: day(-5), value: 3, unit: 'mmol/L' })],
      'rows[1].date',
    ],
    ['an unknown field', [{ ...ldl({ date: day(-5) }), note: 'fasting' } as LabResultInput], 'rows[0].note'],
  ])('%s is a 400 naming the row and field', async (_kind, rows, field) => {
    const before = await allLabs(alice);
    const err = await refusal(alice.data.labs.upsert(rows), field);
    expect(err.message).toContain(field);
    expect(await allLabs(alice)).toEqual(before);
  });

  test('a FHIR entry without a LOINC code is a 400 naming its path, and the good entry is not stored', async () => {
    const before = await allLabs(alice);
    const uncoded = observation('13457-7', 120, 'mg/dL', day(-3));
    uncoded.resource.code = { coding: [{ system: 'http://snomed.info/sct', code: '113079009' }] };
    await refusal(
      alice.data.labs.upsert(bundle(observation('2093-3', 190, 'mg/dL', day(-3)), uncoded)),
      'entry[1].resource.code',
    );
    expect(await allLabs(alice)).toEqual(before);
  });

  test.each<[string, () => FhirBundle, string]>([
    [
      'an inconvertible unit',
      () => bundle(observation('4548-4', 38, 'mmol/mol', day(-3))),
      'entry[0].resource.valueQuantity',
    ],
    [
      'a future day',
      () => bundle(observation('13457-7', 120, 'mg/dL', day(-3)), observation('2085-9', 50, 'mg/dL', day(2))),
      'entry[1].resource.effectiveDateTime',
    ],
    [
      'the same biomarker on the same day twice',
      () => bundle(observation('13457-7', 120, 'mg/dL', day(-3)), observation('18262-6', 3.1, 'mmol/L', day(-3))),
      'entry[1].resource.effectiveDateTime',
    ],
    [
      'an implausible value',
      () => bundle(observation('3016-3', 5000, 'mIU/L', day(-3))),
      'entry[0].resource.valueQuantity.value',
    ],
    ['no entries', () => bundle(), 'entry'],
    [
      `more than ${MAX_DATA_ROWS_PER_REQUEST} entries`,
      () =>
        bundle(
          ...Array.from({ length: MAX_DATA_ROWS_PER_REQUEST + 1 }, (_, i) =>
            observation('2276-4', 80, 'ng/mL', day(-100 - i)),
          ),
        ),
      'entry',
    ],
  ])('a bundle with %s is a 400 naming its path', async (_kind, body, field) => {
    const before = await allLabs(alice);
    await refusal(alice.data.labs.upsert(body()), field);
    expect(await allLabs(alice)).toEqual(before);
  });

  test('a bundle names its first refused entry and lists the others by path', async () => {
    const notFinal = observation('13457-7', 120, 'mg/dL', day(-3));
    notFinal.resource.status = 'preliminary';
    const err = await refusal(
      alice.data.labs.upsert(bundle(observation('13457-7', 120, 'mg/d', day(-3)), notFinal)),
      'entry[0].resource.valueQuantity',
    );
    expect(err.message).toContain('entry[1].resource.status (unusable_status)');
  });

  test('a body with another resourceType is refused by that field', async () => {
    const res = await api(svc.url, 'POST', '/v1/data/labs', {
      key: aliceKey,
      body: observation('13457-7', 1, 'mg/dL', day(-3)).resource,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_field', field: 'resourceType' });
  });

  test('the refusal is the envelope and never quotes the value, the unit or the day sent', async () => {
    for (const row of [ldl({ value: 4242.5 }), ldl({ unit: 'xyz4242' }), ldl({ date: '2099-12-31' })]) {
      const res = await api(svc.url, 'POST', '/v1/data/labs', { key: aliceKey, body: { rows: [row] } });
      expect(res.status).toBe(400);
      const { error } = expectSchema(errorEnvelopeSchema, res.body);
      expect(error.request_id).toBe(res.headers.get('x-request-id'));
      expect(error.message).not.toMatch(/4242|xyz|2099/);
    }
  });

  test(`at most ${MAX_DATA_ROWS_PER_REQUEST} rows a request: one more is a 400 naming rows`, async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ldl({ date: day(-200 - i), value: 100 }));
    const before = await allLabs(alice);
    await refusal(alice.data.labs.upsert(rows(MAX_DATA_ROWS_PER_REQUEST + 1)), 'rows');
    expect(await allLabs(alice)).toEqual(before);
    expect(await alice.data.labs.upsert(rows(MAX_DATA_ROWS_PER_REQUEST))).toEqual({
      inserted: MAX_DATA_ROWS_PER_REQUEST,
      updated: 0,
    });
    expect(await alice.data.labs.delete({ from: day(-200 - MAX_DATA_ROWS_PER_REQUEST), to: day(-200) })).toBe(
      MAX_DATA_ROWS_PER_REQUEST,
    );
    expect(await allLabs(alice)).toEqual(before);
  });

  test('JSON nested thousands deep, in rows or in a bundle, is a 400, never a 500', async () => {
    const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    for (const rawBody of [
      `{"rows":${deep(5000)}}`,
      `{"resourceType":"Bundle","type":"collection","entry":${deep(5000)}}`,
      `{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Observation","status":"final","code":{"coding":[{"system":"${LOINC}","code":"13457-7","extension":${deep(5000)}}]}}}]}`,
    ]) {
      const res = await api(svc.url, 'POST', '/v1/data/labs', { key: aliceKey, rawBody });
      expect(res.status).toBe(400);
    }
  });

  test('a body that is not JSON is a 415', async () => {
    const res = await api(svc.url, 'POST', '/v1/data/labs', {
      key: aliceKey,
      rawBody: 'rows',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
  });
});

describe('listing and deleting', () => {
  test('pages by cursor, oldest first (day, then biomarker), filtered by biomarker and days', async () => {
    const first = await alice.data.labs.list({ limit: 2 });
    expect(first.has_more).toBe(true);
    const next = await first.getNextPage();
    const everything = await allLabs(alice);
    expect([...first.data, ...next.data]).toEqual(everything.slice(0, 4));
    const sorted = [...everything].sort((a, b) => (a.date + a.biomarker).localeCompare(b.date + b.biomarker));
    expect(everything).toEqual(sorted);
    const ldls = await allLabs(alice, { biomarker: 'ldl_cholesterol', limit: 1 });
    expect(ldls.map((lab) => lab.date)).toEqual([day(-30), day(-29), day(-20)]);
    expect((await allLabs(alice, { from: day(-21), to: day(-19) })).map((lab) => lab.biomarker)).toEqual([
      'fasting_glucose',
      'ldl_cholesterol',
      'hdl_cholesterol',
    ]);
  });

  test('a range that ends before it starts, a biomarker not in the list or a foreign cursor is a 400', async () => {
    await refusal(alice.data.labs.list({ from: day(-1), to: day(-2) }), 'to');
    await refusal(alice.data.labs.list({ biomarker: 'cortisol' as never }), 'biomarker');
    await refusal(alice.data.labs.list({ cursor: 'bm90LWEtY3Vyc29y' }), 'cursor');
  });

  test('DELETE removes a range of days, of one biomarker or all, and needs both ends', async () => {
    expect(await alice.data.labs.delete({ from: day(-30), to: day(-30), biomarker: 'hba1c' })).toBe(1);
    expect((await allLabs(alice, { from: day(-30), to: day(-30) })).map((lab) => lab.biomarker)).toEqual([
      'ldl_cholesterol',
    ]);
    expect(await alice.data.labs.delete({ from: day(-21), to: day(-20) })).toBe(2);
    expect((await allLabs(alice)).map((lab) => lab.date)).toEqual([day(-30), day(-29), day(-19)]);
    const res = await api(svc.url, 'DELETE', `/v1/data/labs?from=${day(-30)}`, { key: aliceKey });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('to');
  });

  test("another user's labs are invisible to a reader and a delete", async () => {
    expect(await allLabs(bob)).toEqual([]);
    expect(await bob.data.labs.delete({ from: day(-400), to: day(0) })).toBe(0);
    expect(await bob.data.labs.upsert([ldl({ value: 99 })])).toEqual({ inserted: 1, updated: 0 });
    expect((await allLabs(alice, { from: day(-30), to: day(-30) }))[0].value).toBe(140);
    expect((await allLabs(bob)).map((lab) => lab.value)).toEqual([99]);
  });
});
