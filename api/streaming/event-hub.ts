/**
 * Live delivery of turn events to SSE subscribers. One LISTEN connection per API process; each
 * notification wakes that turn's channel, which fans the new events out in memory to every subscriber
 * of the turn. A notification carries the events it announces when they fit
 * (platform/event-notification.ts): subscribers already up to the first of them get them from it, and
 * nothing is read. Otherwise the channel reads the new rows once for all its subscribers.
 *
 * No loss or duplicate at the replay→live cutover: a subscriber is registered before its first read,
 * every read starts at the lowest cursor of the channel, and each subscriber only receives events
 * above its own cursor. Events from a notification go only to subscribers whose cursor reaches the
 * first of them (ids are gapless), and only while no read is under way; any other subscriber, and a
 * notification that arrives during a read, makes the channel read.
 */
import { Client } from 'pg';
import type { TurnEvent } from '../../contracts/event-data';
import { EVENTS_CHANNEL, type EventLog } from '../../platform/event-log';
import { parseEventNotification } from '../../platform/event-notification';
import type { Logger } from '../../platform/logger';

const PAGE = 500;

interface Subscriber {
  cursor: number;
  deliver(events: TurnEvent[]): void;
}

interface Channel {
  subscribers: Set<Subscriber>;
  reading: boolean;
  readAgain: boolean;
}

export interface EventHub {
  /** Delivers every event of the turn with id > afterId, replayed then live, until unsubscribed. */
  subscribe(turnId: string, afterId: number, deliver: (events: TurnEvent[]) => void): () => void;
  subscriberCount(): number;
  close(): Promise<void>;
}

export async function startEventHub(opts: {
  databaseUrl: string;
  events: EventLog;
  logger: Logger;
}): Promise<EventHub> {
  const { events, logger } = opts;
  const channels = new Map<string, Channel>();
  let listener: Client | null = null;
  let closed = false;

  async function pump(turnId: string, channel: Channel) {
    if (channel.reading) {
      channel.readAgain = true;
      return;
    }
    channel.reading = true;
    try {
      do {
        channel.readAgain = false;
        if (channel.subscribers.size === 0) break;
        const from = Math.min(...[...channel.subscribers].map((s) => s.cursor));
        const batch = await events.readAfter(turnId, from, PAGE);
        for (const subscriber of channel.subscribers) {
          // Joined during this read with an older cursor: the batch does not start at its cursor, so
          // it waits for the next read (its subscribe() already asked for one).
          if (subscriber.cursor < from) continue;
          const fresh = batch.filter((e) => e.id > subscriber.cursor);
          if (fresh.length === 0) continue;
          subscriber.cursor = fresh[fresh.length - 1].id;
          subscriber.deliver(fresh);
        }
        if (batch.length === PAGE) channel.readAgain = true;
      } while (channel.readAgain);
    } catch (err) {
      logger.error('event read failed', { turn_id: turnId, error: String(err) });
      // Try again shortly rather than leaving subscribers stranded.
      setTimeout(() => void pump(turnId, channel), 500).unref();
    } finally {
      channel.reading = false;
    }
  }

  /**
   * Hands the notification's events to the subscribers they continue; true if every subscriber is now
   * up to date, false if one needs a read (it is behind the first of them, or a read is under way).
   */
  function deliverNotified(channel: Channel, events: TurnEvent[]): boolean {
    if (channel.reading) return false;
    const first = events[0].id;
    let upToDate = true;
    for (const subscriber of channel.subscribers) {
      if (subscriber.cursor < first - 1) {
        upToDate = false;
        continue;
      }
      const fresh = events.filter((e) => e.id > subscriber.cursor);
      if (fresh.length === 0) continue;
      subscriber.cursor = fresh[fresh.length - 1].id;
      subscriber.deliver(fresh);
    }
    return upToDate;
  }

  function onNotification(payload: string | undefined) {
    const notice = parseEventNotification(payload);
    if (!notice) return;
    const channel = channels.get(notice.turnId);
    if (!channel) return;
    // Only parsed for a turn this process streams: every API process hears every append.
    const events = notice.events();
    if (events && deliverNotified(channel, events)) return;
    void pump(notice.turnId, channel);
  }

  async function connectListener(): Promise<void> {
    const client = new Client({ connectionString: opts.databaseUrl });
    client.on('notification', (msg) => onNotification(msg.payload));
    client.on('error', (err) => {
      // Only the live listener's loss starts a reconnection. A client that failed while being set up
      // is the reconnecting loop's own business: reacting to it as well would start a second loop,
      // and two loops leave a listener connection behind.
      if (client !== listener) return;
      logger.warn('event listener connection lost; reconnecting', { error: String(err) });
      void reconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (closed) {
      // close() ran while we were connecting: this connection would outlive the hub.
      await client.end().catch(() => undefined);
      return;
    }
    listener = client;
  }

  async function reconnect() {
    const old = listener;
    listener = null;
    await old?.end().catch(() => undefined);
    for (let delay = 250; !closed; delay = Math.min(delay * 2, 5000)) {
      try {
        await connectListener();
        if (closed) return;
        // Anything appended while we were deaf is picked up by reading every open channel once.
        for (const [turnId, channel] of channels) void pump(turnId, channel);
        logger.info('event listener reconnected');
        return;
      } catch (err) {
        logger.warn('event listener reconnect failed', { error: String(err), retry_in_ms: delay });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  await connectListener();

  return {
    subscribe(turnId, afterId, deliver) {
      let channel = channels.get(turnId);
      if (!channel) {
        channel = { subscribers: new Set(), reading: false, readAgain: false };
        channels.set(turnId, channel);
      }
      const subscriber: Subscriber = { cursor: afterId, deliver };
      channel.subscribers.add(subscriber);
      void pump(turnId, channel);
      return () => {
        channel.subscribers.delete(subscriber);
        if (channel.subscribers.size === 0 && channels.get(turnId) === channel) channels.delete(turnId);
      };
    },
    subscriberCount() {
      let n = 0;
      for (const channel of channels.values()) n += channel.subscribers.size;
      return n;
    },
    async close() {
      closed = true;
      channels.clear();
      await listener?.end().catch(() => undefined);
    },
  };
}
