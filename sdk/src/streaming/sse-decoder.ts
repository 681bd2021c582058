/**
 * Lines → events, as the WHATWG event-stream interpretation rules say: `field: value` lines
 * accumulate until a blank line dispatches them; `data` lines join with "\n"; comments (`:`) and
 * unknown fields are ignored; `id` persists across events (the last event id), and an `id` holding
 * NUL is ignored. A block without `data` dispatches nothing.
 */
export interface SseMessage {
  /** The last event id when this event was dispatched (`''` if the stream never set one). */
  id: string;
  /** `message` when the block had no `event:` line. */
  event: string;
  data: string;
  /** A `retry:` field in this block, in milliseconds. */
  retryMs?: number;
}

export class SseDecoder {
  private lastEventId = '';
  private event = '';
  private data: string[] = [];
  private retryMs: number | undefined;

  /** Feeds one line; returns the event a blank line completes, if any. */
  line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const { data, event, retryMs } = this;
    this.data = [];
    this.event = '';
    this.retryMs = undefined;
    if (data.length === 0) return null;
    return {
      id: this.lastEventId,
      event: event || 'message',
      data: data.join('\n'),
      ...(retryMs !== undefined ? { retryMs } : {}),
    };
  }
}
