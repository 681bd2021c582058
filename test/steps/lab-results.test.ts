/**
 * Lab results written by the API's service (api/tables/data.ts) against a real Postgres, read where the
 * pipeline reads them: `readLabResults` gives them in their canonical units, and the Domain Expert's
 * `user_profile` tool (through the turn's snapshot) shows the latest value of each biomarker. The upsert
 * keeps one value per biomarker and day, a refused request stores nothing, and one request is one statement.
 */
import { Pool } from 'pg';
import { readUserProfile } from '../../activities/agents/domain-expert/user-profile';
import { upsertLabBundleForUser, upsertLabRowsForUser } from '../../api/tables/data';
import { ApiError } from '../../api/errors';
import { readLabResults } from '../../platform/health-data/store';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';

let database: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new Pool({ connectionString: database.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

test('a lab sent in mmol/L is read by readLabResults in mg/dL, and the Domain Expert sees it as the latest', async () => {
  const { userId, turnId } = await insertUserAndTurn(database.url);
  await upsertLabRowsForUser(pool, userId, {
    rows: [
      { date: '2026-01-10', biomarker: 'ldl_cholesterol', value: 150, unit: 'mg/dL' },
      { date: '2026-03-04', biomarker: 'ldl_cholesterol', value: 3.36, unit: 'mmol/L' },
      { date: '2026-03-04', biomarker: 'tsh', value: 2.1, unit: 'uIU/mL' },
    ],
  });
  expect(await readLabResults(pool, userId)).toEqual([
    { taken_on: '2026-03-04', name: expect.any(String), value: expect.any(Number), unit: expect.any(String) },
    { taken_on: '2026-03-04', name: expect.any(String), value: expect.any(Number), unit: expect.any(String) },
    { taken_on: '2026-01-10', name: 'ldl_cholesterol', value: 150, unit: 'mg/dL' },
  ]);
  const byName = new Map((await readLabResults(pool, userId)).map((row) => [`${row.name} ${row.taken_on}`, row]));
  expect(byName.get('ldl_cholesterol 2026-03-04')).toMatchObject({ value: 129.9144, unit: 'mg/dL' });
  expect(byName.get('tsh 2026-03-04')).toMatchObject({ value: 2.1, unit: 'mIU/L' });

  const profile = await readUserProfile(pool, { turnId, userId }, new Date('2026-03-10T00:00:00Z'));
  expect(profile.latest_biomarkers).toEqual([
    { name: 'ldl_cholesterol', value: 129.9144, unit: 'mg/dL', taken_on: '2026-03-04' },
    { name: 'tsh', value: 2.1, unit: 'mIU/L', taken_on: '2026-03-04' },
  ]);
});

test('the same biomarker and day again replaces the one row; a bundle upserts the same way', async () => {
  const { userId } = await insertUserAndTurn(database.url);
  const row = { date: '2026-02-01', biomarker: 'hba1c' as const, value: 5.6, unit: '%' };
  expect(await upsertLabRowsForUser(pool, userId, { rows: [row] })).toEqual({ inserted: 1, updated: 0 });
  expect(await upsertLabRowsForUser(pool, userId, { rows: [{ ...row, value: 5.9 }] })).toEqual({
    inserted: 0,
    updated: 1,
  });
  const observation = {
    resourceType: 'Observation',
    status: 'amended',
    code: { coding: [{ system: 'http://loinc.org', code: '4548-4' }] },
    valueQuantity: { value: 6.1, unit: '%', system: 'http://unitsofmeasure.org', code: '%' },
    effectiveDateTime: '2026-02-01',
  };
  expect(
    await upsertLabBundleForUser(pool, userId, {
      resourceType: 'Bundle',
      type: 'searchset',
      entry: [{ resource: observation }],
    }),
  ).toEqual({ inserted: 0, updated: 1 });
  expect(await readLabResults(pool, userId)).toEqual([
    { taken_on: '2026-02-01', name: 'hba1c', value: 6.1, unit: '%' },
  ]);
});

test('a refused row stores none of the request, and the message names the field, not the value', async () => {
  const { userId } = await insertUserAndTurn(database.url);
  const refused = await upsertLabRowsForUser(pool, userId, {
    rows: [
      { date: '2026-02-01', biomarker: 'ferritin', value: 80, unit: 'ng/mL' },
      { date: '2026-02-01', biomarker: 'vitamin_d', value: 77.7, unit: 'mg/dL' },
    ],
  }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ code: 'invalid_field', field: 'rows[1].value' });
  expect((refused as ApiError).message).not.toMatch(/77\.7|777/);
  expect(await readLabResults(pool, userId)).toEqual([]);
});
