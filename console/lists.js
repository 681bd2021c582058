/**
 * The side panels: the user's recent turns (each a link to `#turn=<id>`, which reopens it) and their
 * memory, a page at a time with the SDK's cursor pages.
 */
import { append, byId, fill, h } from './dom.js';
import { formatDate, formatDateTime } from './format.js';

const RECENT_PAGE_SIZE = 10;
const MEMORY_PAGE_SIZE = 20;

/** A list panel: its first page on `load`, older entries appended on "more". */
class PagedList {
  #list;
  #more;
  #page = null;
  #onError;

  constructor(listId, moreId, onError) {
    this.#list = byId(listId);
    this.#more = byId(moreId);
    this.#onError = onError;
    this.#more.addEventListener('click', () => this.#next().catch(this.#onError));
  }

  get list() {
    return this.#list;
  }

  async show(pagePromise) {
    const page = await pagePromise;
    this.#page = page;
    fill(
      this.#list,
      page.data.map((item) => this.render(item)),
    );
    this.#list.dataset.empty = String(page.data.length === 0);
    this.#more.hidden = !page.hasNextPage();
  }

  clear() {
    this.#page = null;
    fill(this.#list);
    this.#more.hidden = true;
  }

  async #next() {
    if (!this.#page?.hasNextPage()) return;
    this.#more.disabled = true;
    try {
      const page = await this.#page.getNextPage();
      this.#page = page;
      append(
        this.#list,
        page.data.map((item) => this.render(item)),
      );
      this.#more.hidden = !page.hasNextPage();
    } finally {
      this.#more.disabled = false;
    }
  }
}

export class RecentTurns extends PagedList {
  #current = null;

  constructor(onError) {
    super('recent-list', 'recent-more', onError);
  }

  load(amy) {
    return this.show(amy.turns.list({ limit: RECENT_PAGE_SIZE }));
  }

  /** Highlights the turn on screen. */
  markCurrent(turnId) {
    this.#current = turnId;
    for (const item of this.list.children) item.classList.toggle('current', item.dataset.turnId === turnId);
  }

  render(turn) {
    const question = [...turn.messages].reverse().find((m) => m.role === 'user')?.content ?? turn.id;
    return h(
      'li',
      { className: turn.id === this.#current ? 'current' : '', dataset: { turnId: turn.id } },
      h(
        'a',
        { href: `#turn=${turn.id}`, className: 'turn-link', title: question },
        h('span', { className: 'turn-question' }, question),
        h(
          'span',
          { className: 'turn-meta' },
          h('span', { className: 'status', dataset: { status: turn.status } }, turn.status),
          h('time', { dateTime: turn.created_at }, formatDateTime(turn.created_at)),
        ),
      ),
    );
  }
}

export class MemoryList extends PagedList {
  #amy = null;
  #onError;

  constructor(onError) {
    super('memory-list', 'memory-more', onError);
    this.#onError = onError;
  }

  load(amy) {
    this.#amy = amy;
    return this.show(amy.memory.list({ limit: MEMORY_PAGE_SIZE }));
  }

  render(memory) {
    const remove = h('button', { type: 'button', className: 'quiet delete', textContent: 'Delete' });
    remove.setAttribute('aria-label', `Delete memory: ${memory.text}`);
    const item = h(
      'li',
      { className: 'memory', dataset: { memoryId: memory.id, category: memory.category } },
      h(
        'div',
        { className: 'memory-head' },
        h('span', { className: 'category' }, memory.category.replace(/_/g, ' ')),
        h(
          'time',
          { dateTime: memory.created_at, title: formatDateTime(memory.created_at) },
          formatDate(memory.created_at),
        ),
        remove,
      ),
      h('p', { className: 'memory-text' }, memory.text),
    );
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try {
        await this.#amy.memory.delete(memory.id);
        item.remove();
      } catch (err) {
        remove.disabled = false;
        this.#onError(err);
      }
    });
    return item;
  }
}
