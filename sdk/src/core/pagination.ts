/**
 * List endpoints, paged by cursor (`{ data, next_cursor, has_more }`): a list call can be awaited for
 * its first page or iterated with `for await` for every item across pages.
 */
import type { ApiRequest, HttpClient, RequestOptions } from './http';

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

/** A list call on `path` with these filters; each further page sends them again with the previous page's cursor. */
export function listPages<T>(
  http: HttpClient,
  path: string,
  params: NonNullable<ApiRequest['query']> & { cursor?: string },
  options: RequestOptions,
): PagePromise<T> {
  const fetchPage = async (cursor?: string): Promise<Page<T>> => {
    const { body } = await http.request<{ data: T[]; next_cursor: string | null; has_more: boolean }>({
      method: 'GET',
      path,
      query: { ...params, ...(cursor !== undefined ? { cursor } : {}) },
      ...options,
    });
    return new Page(body, fetchPage);
  };
  return new PagePromise(() => fetchPage(params.cursor));
}
