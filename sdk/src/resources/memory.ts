import type { z } from 'zod';
import type { createMemoryRequestSchema, listMemoryQuerySchema, Memory } from '../../../contracts/memory';
import type { HttpClient, RequestOptions } from '../core/http';
import { listPages, type PagePromise } from '../core/pagination';

/** Filters and page size (1–100, default 20); `cursor` starts from a page you already have. */
export type MemoryListParams = Omit<z.input<typeof listMemoryQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};
export type MemoryCreateParams = z.input<typeof createMemoryRequestSchema>;

export class MemoryResource {
  constructor(private readonly http: HttpClient) {}

  /** Memory entries, newest first; `tested_hypothesis` entries only with `include` or by category. */
  list(params: MemoryListParams = {}, options: RequestOptions = {}): PagePromise<Memory> {
    return listPages<Memory>(this.http, '/v1/memory', params, options);
  }

  /** Writes an entry directly (`source_turn_id: null`). */
  async create(params: MemoryCreateParams, options: RequestOptions = {}): Promise<Memory> {
    return (await this.http.request<Memory>({ method: 'POST', path: '/v1/memory', body: params, ...options })).body;
  }

  /** Deletes an entry for good. */
  async delete(memoryId: string, options: RequestOptions = {}): Promise<void> {
    await this.http.request<void>({
      method: 'DELETE',
      path: `/v1/memory/${encodeURIComponent(memoryId)}`,
      deleteIsIdempotent: true,
      ...options,
    });
  }
}
