import type { z } from 'zod';
import type {
  DailySummary,
  DeleteDailyResult,
  DeleteLabsResult,
  FhirBundle,
  LabResult,
  Profile,
  TerraConnection,
  TerraConnectionList,
  UpsertResult,
  Workout,
  deleteLabsQuerySchema,
  listDailyQuerySchema,
  listLabsQuerySchema,
  listWorkoutsQuerySchema,
  upsertDailyRequestSchema,
  upsertLabRowsRequestSchema,
  upsertWorkoutsRequestSchema,
} from '../../../contracts/data';
import type { HttpClient, RequestOptions } from '../core/http';
import { listPages, type PagePromise } from '../core/pagination';

/** One day's summary as sent: `date` and any of the daily metrics (a metric left out is null). */
export type DailySummaryInput = z.input<typeof upsertDailyRequestSchema>['rows'][number];
/** A workout as sent, under your own `external_id`. */
export type WorkoutInput = z.input<typeof upsertWorkoutsRequestSchema>['rows'][number];
/** Days from `from` to `to` (both included, YYYY-MM-DD) and page size (1–1000, default 100). */
export type DailyListParams = Omit<z.input<typeof listDailyQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};
export type WorkoutListParams = Omit<z.input<typeof listWorkoutsQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};
/** A lab result as sent: `date`, `biomarker` (a name the service knows), `value` and its UCUM `unit`. */
export type LabResultInput = z.input<typeof upsertLabRowsRequestSchema>['rows'][number];
/** Optionally one `biomarker`, days from `from` to `to` (both included), page size (1–1000, default 100). */
export type LabListParams = Omit<z.input<typeof listLabsQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};
/** Days from `from` to `to` (both included, both required), optionally of one `biomarker` only. */
export type LabDeleteParams = z.input<typeof deleteLabsQuerySchema>;

/** `amy.data.daily`: daily summaries, upserted by date. */
export class DailySummaries {
  constructor(private readonly http: HttpClient) {}

  /** Stores the days (at most 500 a call), replacing those already stored; if one is refused, none is stored. */
  async upsert(rows: DailySummaryInput[], options: RequestOptions = {}): Promise<UpsertResult> {
    return (
      await this.http.request<UpsertResult>({
        method: 'POST',
        path: '/v1/data/daily',
        body: { rows },
        // Repeating an upsert stores the same days again: safe to retry after a network failure.
        repeatable: true,
        ...options,
      })
    ).body;
  }

  /** Days oldest first; `for await` over the result for every day across pages. */
  list(params: DailyListParams = {}, options: RequestOptions = {}): PagePromise<DailySummary> {
    return listPages<DailySummary>(this.http, '/v1/data/daily', params, options);
  }

  /** Deletes the days from `from` to `to`, both included; resolves to how many were deleted. */
  async delete(range: { from: string; to: string }, options: RequestOptions = {}): Promise<number> {
    const { body } = await this.http.request<DeleteDailyResult>({
      method: 'DELETE',
      path: '/v1/data/daily',
      query: range,
      ...options,
    });
    return body.deleted;
  }
}

/** `amy.data.workouts`: workouts, upserted by your `external_id`. */
export class Workouts {
  constructor(private readonly http: HttpClient) {}

  /** Stores the workouts (at most 500 a call); the same `external_id` again updates one. All or none. */
  async upsert(rows: WorkoutInput[], options: RequestOptions = {}): Promise<UpsertResult> {
    return (
      await this.http.request<UpsertResult>({
        method: 'POST',
        path: '/v1/data/workouts',
        body: { rows },
        repeatable: true,
        ...options,
      })
    ).body;
  }

  /** Workouts oldest first (date, then external_id), optionally of one `type` and between two days. */
  list(params: WorkoutListParams = {}, options: RequestOptions = {}): PagePromise<Workout> {
    return listPages<Workout>(this.http, '/v1/data/workouts', params, options);
  }

  /** Deletes the workout with this external id for good. */
  async delete(externalId: string, options: RequestOptions = {}): Promise<void> {
    await this.http.request<void>({
      method: 'DELETE',
      path: `/v1/data/workouts/${encodeURIComponent(externalId)}`,
      deleteIsIdempotent: true,
      ...options,
    });
  }
}

/** `amy.data.labs`: lab results, upserted by biomarker and day, stored in each biomarker's canonical unit. */
export class LabResults {
  constructor(private readonly http: HttpClient) {}

  /**
   * Stores lab results given as rows or as a FHIR R4 Bundle of Observations (at most 500 a call), each
   * converted to its biomarker's canonical unit; the same biomarker on the same day replaces the value
   * stored. If one is refused, none is stored.
   */
  async upsert(results: LabResultInput[] | FhirBundle, options: RequestOptions = {}): Promise<UpsertResult> {
    return (
      await this.http.request<UpsertResult>({
        method: 'POST',
        path: '/v1/data/labs',
        body: Array.isArray(results) ? { rows: results } : results,
        // Repeating an upsert stores the same values again: safe to retry after a network failure.
        repeatable: true,
        ...options,
      })
    ).body;
  }

  /** Results oldest first (day, then biomarker), each with its LOINC code; `for await` for every page. */
  list(params: LabListParams = {}, options: RequestOptions = {}): PagePromise<LabResult> {
    return listPages<LabResult>(this.http, '/v1/data/labs', params, options);
  }

  /** Deletes the results from `from` to `to`, both included (of one `biomarker`, or all); resolves to how many. */
  async delete(params: LabDeleteParams, options: RequestOptions = {}): Promise<number> {
    const { body } = await this.http.request<DeleteLabsResult>({
      method: 'DELETE',
      path: '/v1/data/labs',
      query: params,
      ...options,
    });
    return body.deleted;
  }
}

/** `amy.data.profile`: sex, birth year, height and weight. */
export class HealthProfile {
  constructor(private readonly http: HttpClient) {}

  /** The profile; a `NotFoundError` when none was written. */
  async get(options: RequestOptions = {}): Promise<Profile> {
    return (await this.http.request<Profile>({ method: 'GET', path: '/v1/data/profile', ...options })).body;
  }

  /** Writes the profile, replacing the one stored. */
  async put(profile: Profile, options: RequestOptions = {}): Promise<Profile> {
    return (await this.http.request<Profile>({ method: 'PUT', path: '/v1/data/profile', body: profile, ...options }))
      .body;
  }
}

/** `amy.data.connections`: the providers the user connected through Terra (Garmin, Oura, Whoop, …). */
export class TerraConnections {
  constructor(private readonly http: HttpClient) {}

  /**
   * Every connection, by provider, with its status as Terra's connection events left it; an empty array when
   * there is none. `reauth_required`, `revoked` and `error` mean the user should reconnect through Terra's widget.
   */
  async list(options: RequestOptions = {}): Promise<TerraConnection[]> {
    const { body } = await this.http.request<TerraConnectionList>({
      method: 'GET',
      path: '/v1/data/connections',
      ...options,
    });
    return body.data;
  }
}

/** `amy.data`: the user's own health data, which Amy's answers are computed from. */
export class DataResource {
  readonly daily: DailySummaries;
  readonly workouts: Workouts;
  readonly labs: LabResults;
  readonly profile: HealthProfile;
  readonly connections: TerraConnections;

  constructor(http: HttpClient) {
    this.daily = new DailySummaries(http);
    this.workouts = new Workouts(http);
    this.labs = new LabResults(http);
    this.profile = new HealthProfile(http);
    this.connections = new TerraConnections(http);
  }
}
