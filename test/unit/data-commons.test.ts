/**
 * platform/literature/data-commons.ts against the Data Commons stand-in (dev/stand-ins/data-commons.ts),
 * which answers in the v2 observation JSON: the request's parameters, the first facet's observation with
 * its source, no data as a result of its own, and failures as typed errors.
 */
import { createMemoryToolResultCache } from '../../platform/literature/cache';
import { createDataCommonsClient } from '../../platform/literature/data-commons';
import {
  ToolMalformedResponseError,
  ToolRateLimitedError,
  ToolRequestRefusedError,
  ToolUnavailableError,
} from '../../platform/literature/errors';
import { createMemoryRateLimiter } from '../../platform/literature/rate-limit';
import { startDataCommonsStandIn } from '../../dev/stand-ins/data-commons';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';

let dc: StandInServer;
beforeAll(async () => {
  dc = await startDataCommonsStandIn();
});
afterAll(() => dc.close());
beforeEach(() => {
  dc.reset();
  dc.requests.length = 0;
});

function client(overrides: Partial<Parameters<typeof createDataCommonsClient>[0]> = {}) {
  return createDataCommonsClient({
    baseUrl: dc.url,
    apiKey: 'dc-key',
    limiter: createMemoryRateLimiter({ sleep: () => Promise.resolve() }),
    cache: createMemoryToolResultCache(),
    timeoutMs: 2000,
    ...overrides,
  });
}

const CDC = {
  importName: 'CDC500',
  provenanceUrl: 'https://www.cdc.gov/places/index.html',
  measurementMethod: 'AgeAdjustedPrevalence',
  unit: null,
};

test('the latest observation with its source, asked with key, variable.dcids, entity.dcids, date and select', async () => {
  const result = await client().observe({ variable: 'Percent_Person_WithHighCholesterol', entity: 'country/USA' });
  expect(result).toEqual({
    kind: 'observation',
    variable: 'Percent_Person_WithHighCholesterol',
    entity: 'country/USA',
    date: '2021',
    value: 30.6,
    source: CDC,
  });
  const [request] = dc.requests;
  expect(request.pathname).toBe('/v2/observation');
  expect(request.searchParams.get('key')).toBe('dc-key');
  expect(request.searchParams.get('date')).toBe('LATEST');
  expect(request.searchParams.getAll('variable.dcids')).toEqual(['Percent_Person_WithHighCholesterol']);
  expect(request.searchParams.getAll('entity.dcids')).toEqual(['country/USA']);
  expect(request.searchParams.getAll('select').sort()).toEqual(['date', 'entity', 'value', 'variable']);
});

test('at a date; no observation at that date, or of that variable, is a no_data result', async () => {
  const dcClient = client();
  const at2019 = await dcClient.observe({
    variable: 'Percent_Person_WithHighCholesterol',
    entity: 'country/USA',
    date: '2019',
  });
  expect(at2019).toMatchObject({ kind: 'observation', date: '2019', value: 31.2 });
  expect(
    await dcClient.observe({ variable: 'Percent_Person_WithHighCholesterol', entity: 'country/USA', date: '2005' }),
  ).toEqual({
    kind: 'no_data',
    variable: 'Percent_Person_WithHighCholesterol',
    entity: 'country/USA',
    date: '2005',
  });
  expect(await dcClient.observe({ variable: 'Count_Person', entity: 'geoId/06' })).toMatchObject({ kind: 'no_data' });
  // Cached: asking again sends nothing.
  const sent = dc.requests.length;
  await dcClient.observe({ variable: 'Count_Person', entity: 'geoId/06' });
  expect(dc.requests).toHaveLength(sent);
});

test('the first facet in Data Commons order that has the date answers', async () => {
  const fetch = jest.fn(async () =>
    Response.json({
      byVariable: {
        V: {
          byEntity: {
            'country/USA': {
              orderedFacets: [
                { facetId: 'a', observations: [{ date: '2020', value: 1 }] },
                {
                  facetId: 'b',
                  observations: [
                    { date: '2021', value: 2 },
                    { date: '2022', value: 3 },
                  ],
                },
              ],
            },
          },
        },
      },
      facets: { b: { importName: 'B', provenanceUrl: 'https://b.example/' } },
    }),
  ) as unknown as typeof globalThis.fetch;
  const dcClient = client({ fetch });
  expect(await dcClient.observe({ variable: 'V', entity: 'country/USA', date: '2022' })).toEqual({
    kind: 'observation',
    variable: 'V',
    entity: 'country/USA',
    date: '2022',
    value: 3,
    source: { importName: 'B', provenanceUrl: 'https://b.example/', measurementMethod: null, unit: null },
  });
  expect(await dcClient.observe({ variable: 'V', entity: 'country/USA' })).toMatchObject({ value: 1 });
});

test('free text is refused before any request; failures are typed and never quote the request', async () => {
  await expect(client().observe({ variable: 'my LDL 131', entity: 'country/USA' })).rejects.toBeInstanceOf(
    ToolRequestRefusedError,
  );
  await expect(
    client().observe({ variable: 'Count_Person', entity: 'country/USA', date: 'last week' }),
  ).rejects.toBeInstanceOf(ToolRequestRefusedError);
  expect(dc.requests).toHaveLength(0);

  const cases = [
    [{ kind: 'rate_limited', retryAfterSeconds: 2 }, ToolRateLimitedError],
    [{ kind: 'server_error', status: 502 }, ToolUnavailableError],
    [{ kind: 'malformed' }, ToolMalformedResponseError],
  ] as const;
  for (const [fault, type] of cases) {
    dc.fail(fault, 1);
    const error = await client()
      .observe({ variable: 'Count_Person', entity: 'country/USA' })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).not.toMatch(/Count_Person|dc-key|country/);
  }
  const refused = await client({ apiKey: '' })
    .observe({ variable: 'Count_Person', entity: 'country/USA' })
    .catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(ToolRequestRefusedError);
  expect((refused as ToolRequestRefusedError).status).toBe(401);
});
