/**
 * A stand-in for Google Data Commons' REST API v2 observation endpoint (`GET /v2/observation`), answering
 * in its published JSON (byVariable → byEntity → orderedFacets, and facets) over a few statistical
 * variables, for tests and `npm start` without network access or an API key.
 *
 * The variables and sources are Data Commons' own names; the values are invented for the stand-in.
 */
import { startStandIn, type StandInServer } from './http-knobs';

interface StandInSeries {
  variable: string;
  entity: string;
  facetId: string;
  observations: Array<{ date: string; value: number }>;
}

const FACETS = {
  '3690003977': {
    importName: 'CDC500',
    provenanceUrl: 'https://www.cdc.gov/places/index.html',
    measurementMethod: 'AgeAdjustedPrevalence',
    observationPeriod: 'P1Y',
  },
  '2176550201': {
    importName: 'USCensusPEP_Annual_Population',
    provenanceUrl: 'https://www2.census.gov/programs-surveys/popest/tables',
    measurementMethod: 'CensusPEPSurvey',
    observationPeriod: 'P1Y',
  },
} as const;

const DATA_COMMONS_STAND_IN_SERIES: readonly StandInSeries[] = [
  {
    variable: 'Percent_Person_WithHighCholesterol',
    entity: 'country/USA',
    facetId: '3690003977',
    observations: [
      { date: '2019', value: 31.2 },
      { date: '2021', value: 30.6 },
    ],
  },
  {
    variable: 'Percent_Person_SleepLessThan7Hours',
    entity: 'country/USA',
    facetId: '3690003977',
    observations: [
      { date: '2020', value: 34.9 },
      { date: '2022', value: 35.6 },
    ],
  },
  {
    variable: 'Percent_Person_PhysicalInactivity',
    entity: 'country/USA',
    facetId: '3690003977',
    observations: [{ date: '2021', value: 23.8 }],
  },
  {
    variable: 'Count_Person',
    entity: 'country/USA',
    facetId: '2176550201',
    observations: [
      { date: '2022', value: 333271411 },
      { date: '2023', value: 334914895 },
    ],
  },
];

function observation(url: URL) {
  const date = url.searchParams.get('date') ?? '';
  const variables = url.searchParams.getAll('variable.dcids');
  const entities = url.searchParams.getAll('entity.dcids');
  if (!url.searchParams.get('key')) return { status: 401, body: { code: 16, message: 'Method requires an API key' } };
  if (variables.length === 0 || date === '') {
    return { status: 400, body: { code: 3, message: 'Missing required argument', details: [] } };
  }
  const byVariable: Record<string, { byEntity: Record<string, unknown> }> = {};
  const facets: Record<string, unknown> = {};
  for (const variable of variables) {
    const byEntity: Record<string, unknown> = {};
    for (const entity of entities) {
      const series = DATA_COMMONS_STAND_IN_SERIES.find((s) => s.variable === variable && s.entity === entity);
      if (!series) continue;
      const observations =
        date === 'LATEST' ? series.observations.slice(-1) : series.observations.filter((o) => o.date === date);
      if (observations.length === 0) continue;
      byEntity[entity] = {
        orderedFacets: [
          {
            facetId: series.facetId,
            observations,
            obsCount: observations.length,
            earliestDate: observations[0].date,
            latestDate: observations[observations.length - 1].date,
          },
        ],
      };
      facets[series.facetId] = FACETS[series.facetId as keyof typeof FACETS];
    }
    byVariable[variable] = { byEntity };
  }
  return { status: 200, body: { byVariable, facets } };
}

/** Answers `GET <url>/v2/observation`; the client's base URL is `url`. */
export function startDataCommonsStandIn(options: { port?: number; host?: string } = {}): Promise<StandInServer> {
  return startStandIn(
    (url) =>
      url.pathname === '/v2/observation' ? observation(url) : { status: 404, body: { code: 5, message: 'Not Found' } },
    options,
  );
}
