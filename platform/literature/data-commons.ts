/**
 * Google Data Commons' REST API v2 observation endpoint (https://docs.datacommons.org/api/rest/v2/observation):
 * one statistical variable for one place, at a date or the latest one, with where the number comes from.
 *
 * Data Commons may hold a variable for a place from several sources (facets); `orderedFacets` lists them
 * in Data Commons' order of preference, and the first with an observation at the date asked is the answer.
 * Its source is the facet's import name and provenance URL, so the Domain Expert can cite it.
 */
import { z } from 'zod';
import { type ToolResultCache, toolCacheKey } from './cache';
import { ToolMalformedResponseError, ToolRequestRefusedError } from './errors';
import { getOutsideJson, outsideService, type OutsideServiceOptions } from './outside-request';

export const DATA_COMMONS_DEFAULT_BASE_URL = 'https://api.datacommons.org';
/**
 * Data Commons publishes no per-second limit for keyed requests; 10 a second keeps a deployment well
 * within any quota a key is likely to have while costing a turn nothing it would notice.
 */
const DATA_COMMONS_REQUEST_INTERVAL_MS = 100;
const DEFAULT_CACHE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A DCID: `Count_Person`, `country/USA`, `geoId/06`. Nothing else, so no free text travels in these fields. */
const DCID = /^[A-Za-z0-9][A-Za-z0-9_./:-]{0,199}$/;
/** ISO 8601 year, month or day, as Data Commons dates observations. */
const OBSERVATION_DATE = /^\d{4}(?:-\d{2}(?:-\d{2})?)?$/;

interface ObservationSource {
  importName: string | null;
  provenanceUrl: string | null;
  measurementMethod: string | null;
  unit: string | null;
}

interface Observation {
  kind: 'observation';
  variable: string;
  entity: string;
  date: string;
  value: number;
  source: ObservationSource;
}

/** Data Commons holds no observation of the variable for the place at that date. */
interface NoObservation {
  kind: 'no_data';
  variable: string;
  entity: string;
  date: string;
}

export interface DataCommonsClient {
  /** `date` is a year, month or day (YYYY, YYYY-MM, YYYY-MM-DD); without it, the latest observation. */
  observe(query: { variable: string; entity: string; date?: string }): Promise<Observation | NoObservation>;
}

export interface DataCommonsClientOptions extends OutsideServiceOptions {
  apiKey: string;
  cache: ToolResultCache;
  cacheTtlMs?: number;
}

const observationResponse = z.object({
  byVariable: z.record(
    z.string(),
    z.object({
      byEntity: z
        .record(
          z.string(),
          z.object({
            orderedFacets: z
              .array(
                z.object({
                  facetId: z.string(),
                  observations: z.array(z.object({ date: z.string(), value: z.number() })).default([]),
                }),
              )
              .default([]),
          }),
        )
        .default({}),
    }),
  ),
  facets: z
    .record(
      z.string(),
      z.object({
        importName: z.string().optional(),
        provenanceUrl: z.string().optional(),
        measurementMethod: z.string().optional(),
        unit: z.string().optional(),
      }),
    )
    .default({}),
});

export function createDataCommonsClient(options: DataCommonsClientOptions): DataCommonsClient {
  const { base, host, deps } = outsideService(options);
  const refuse = (reason: string) => new ToolRequestRefusedError('Data Commons', host, null, reason);

  return {
    async observe({ variable, entity, date }) {
      if (!DCID.test(variable)) throw refuse('the variable is not a Data Commons id');
      if (!DCID.test(entity)) throw refuse('the entity is not a Data Commons id');
      if (date !== undefined && !OBSERVATION_DATE.test(date))
        throw refuse('the date is not YYYY, YYYY-MM or YYYY-MM-DD');
      const dateExpression = date ?? 'LATEST';
      const key = toolCacheKey('datacommons.observe', { variable, entity, date: dateExpression });
      const cached = (await options.cache.get(key)) as Observation | NoObservation | undefined;
      if (cached !== undefined) return cached;

      const url = new URL(`${base}/v2/observation`);
      url.searchParams.set('key', options.apiKey);
      url.searchParams.set('date', dateExpression);
      url.searchParams.append('variable.dcids', variable);
      url.searchParams.append('entity.dcids', entity);
      for (const field of ['date', 'entity', 'value', 'variable']) url.searchParams.append('select', field);
      const body = await getOutsideJson(deps, {
        service: 'Data Commons',
        url,
        intervalMs: DATA_COMMONS_REQUEST_INTERVAL_MS,
      });
      const parsed = observationResponse.safeParse(body);
      if (!parsed.success) {
        throw new ToolMalformedResponseError('Data Commons', host, 'observation without byVariable');
      }
      const result = pickObservation(parsed.data, variable, entity, dateExpression);
      await options.cache.set(key, result, options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS);
      return result;
    },
  };
}

/** The first facet, in Data Commons' order, with an observation; its latest one when several. */
function pickObservation(
  response: z.output<typeof observationResponse>,
  variable: string,
  entity: string,
  date: string,
): Observation | NoObservation {
  const orderedFacets = response.byVariable[variable]?.byEntity[entity]?.orderedFacets ?? [];
  for (const facet of orderedFacets) {
    const observations = date === 'LATEST' ? facet.observations : facet.observations.filter((o) => o.date === date);
    if (observations.length === 0) continue;
    const latest = observations.reduce((a, b) => (b.date > a.date ? b : a));
    const meta = response.facets[facet.facetId] ?? {};
    return {
      kind: 'observation',
      variable,
      entity,
      date: latest.date,
      value: latest.value,
      source: {
        importName: meta.importName ?? null,
        provenanceUrl: meta.provenanceUrl ?? null,
        measurementMethod: meta.measurementMethod ?? null,
        unit: meta.unit ?? null,
      },
    };
  }
  return { kind: 'no_data', variable, entity, date };
}
