import type { z } from 'zod';
import type { createMemoryRequestSchema, listMemoryQuerySchema, Memory, MemoryList } from '../../../contracts/memory';
import type { HttpClient, RequestOptions } from '../core/http';

/** Filters and page size (1–100, default 20); `cursor` starts from a page you already have. */
export type MemoryListParams = Omit<z.input<typeof listMemoryQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};
export type MemoryCreateParams = z.input<typeof createMemoryRequestSchema>;

/** One page of a list: `{ data, next_cursor, has_more }` as the API returns it. */
export class Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;

  constructor(
    body: { data: T[]; next_cursor: string | null; has_more: boolean },
    private readonly fetchPage: (cursor: string) => Promise<Page<T>>,
  ) {
    this.data = body.data;
    this.next_cursor = body.next_cursor;
    this.has_more = body.has_more;
  }

  hasNextPage(): boolean {
    return this.has_more && this.next_cursor !== null;
  }

  /** The page after this one, with the same filters. */
  getNextPage(): Promise<Page<T>> {
    if (!this.hasNextPage()) throw new Error('There is no next page.');
    return this.fetchPage(this.next_cursor as string);
  }
}

/**
 * A list call: `await` it for the first page, or `for await` over it for every entry across all
 * pages (fetched one page at a time, as you go).
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | null = null;

  constructor(private readonly fetchFirst: () => Promise<Page<T>>) {}

  private firstPage(): Promise<Page<T>> {
    return (this.first ??= this.fetchFirst());
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    for (;;) {
      yield* page.data;
      if (!page.hasNextPage()) return;
      page = await page.getNextPage();
    }
  }
}

export class MemoryResource {
  constructor(private readonly http: HttpClient) {}

  /** Memory entries, newest first; `tested_hypothesis` entries only with `include` or by category. */
  list(params: MemoryListParams = {}, options: RequestOptions = {}): PagePromise<Memory> {
    const fetchPage = async (cursor?: string): Promise<Page<Memory>> => {
      const { body } = await this.http.request<MemoryList>({
        method: 'GET',
        path: '/v1/memory',
        query: { ...params, ...(cursor !== undefined ? { cursor } : {}) },
        ...options,
      });
      return new Page(body, fetchPage);
    };
    return new PagePromise(() => fetchPage(params.cursor));
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
