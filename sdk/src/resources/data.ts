import type { z } from 'zod';
import type {
  DailySummary,
  DeleteDailyResult,
  Profile,
  UpsertResult,
  Workout,
  listDailyQuerySchema,
  listWorkoutsQuerySchema,
  upsertDailyRequestSchema,
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

/** `amy.data`: the user's own health data, which Amy's answers are computed from. */
export class DataResource {
  readonly daily: DailySummaries;
  readonly workouts: Workouts;
  readonly profile: HealthProfile;

  constructor(http: HttpClient) {
    this.daily = new DailySummaries(http);
    this.workouts = new Workouts(http);
    this.profile = new HealthProfile(http);
  }
}
