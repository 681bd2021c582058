import type { AccountDeletion } from '../../../contracts/account';
import type { HttpClient, RequestOptions } from '../core/http';

export class AccountResource {
  constructor(private readonly http: HttpClient) {}

  /**
   * Deletes the key's account everywhere, irreversibly (docs/api.md#deleting-an-account), and says what was
   * erased and what is kept. The key stops working with it. Not retried after a failure that may have reached
   * the server: ask again with the same key, and a deletion that did not finish finishes.
   */
  async delete(options: RequestOptions = {}): Promise<AccountDeletion> {
    return (await this.http.request<AccountDeletion>({ method: 'DELETE', path: '/v1/account', ...options })).body;
  }
}
