import type { z } from 'zod';
import { characterCount, MAX_MESSAGE_CHARS, MAX_MESSAGES } from '../../../contracts/conversation-limits';
import type { FindingSeriesResponse } from '../../../contracts/finding-series';
import type { InputReceived } from '../../../contracts/interaction';
import type { createTurnRequestSchema, listTurnsQuerySchema, Turn } from '../../../contracts/turn';
import { ConversationTooLongError } from '../core/errors';
import type { HttpClient, RequestOptions } from '../core/http';
import { newIdempotencyKey } from '../core/idempotency';
import { listPages, type PagePromise } from '../core/pagination';
import type { StreamTransport } from '../streaming/transport';
import { TurnStream, type StreamSettings, type TurnStreamOptions } from '../streaming/turn-stream';

/** `POST /v1/turns`'s body: `messages`, and optionally `stream` (default true), `context` and `interaction`. */
export type TurnCreateParams = z.input<typeof createTurnRequestSchema>;

/**
 * Lets the turn ask back and wait for the answer: `accepts` (`confirmation`, `clarification`), and optionally
 * `timeout_seconds` (default 900) and `on_expiry` (`continue` with the default option, or `fail`).
 */
export type TurnInteraction = NonNullable<TurnCreateParams['interaction']>;

/** `status` to list only turns in that state, page size (1–100, default 20); `cursor` starts from a page you already have. */
export type TurnListParams = Omit<z.input<typeof listTurnsQuerySchema>, 'cursor' | 'limit'> & {
  cursor?: string;
  limit?: number;
};

export interface TurnCreateOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`; a fresh one is made for every `create` call. The same key is sent
   * on every retry of that call, so a response lost on the way back never starts a second turn.
   */
  idempotencyKey?: string;
}

/**
 * The answer to a turn's question (`turn.input_required`): its `request_id` and one of its options' ids, or, when
 * the request allows `free_text`, text of the user's own.
 */
export type TurnInputAnswer = { request_id: string; option_id: string } | { request_id: string; text: string };

export interface TurnRespondOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`; a fresh one is made for every `respond` call and sent on each of its retries, so
   * an answer whose response was lost is applied once.
   */
  idempotencyKey?: string;
}

/**
 * The API's limits on a conversation, checked before a body of megabytes is sent only to be refused. The
 * body itself always fits: JSON.stringify writes at most 6 bytes a character, and the API takes 12.
 */
function checkConversationLimits(messages: TurnCreateParams['messages']) {
  if (!Array.isArray(messages)) return;
  if (messages.length > MAX_MESSAGES) {
    throw new ConversationTooLongError(
      'messages',
      `messages: ${messages.length} messages, and a turn takes at most ${MAX_MESSAGES}.`,
    );
  }
  for (const [i, message] of messages.entries()) {
    const characters = typeof message?.content === 'string' ? characterCount(message.content) : 0;
    if (characters > MAX_MESSAGE_CHARS) {
      throw new ConversationTooLongError(
        `messages[${i}].content`,
        `messages[${i}].content: ${characters} characters, and a message holds at most ${MAX_MESSAGE_CHARS} (Unicode code points).`,
      );
    }
  }
}

/** A blocking create (`stream: false`) waits for the whole turn, which can take minutes. */
const BLOCKING_CREATE_TIMEOUT_MS = 15 * 60_000;

export class Turns {
  constructor(
    private readonly http: HttpClient,
    private readonly transport: StreamTransport,
    private readonly streamSettings: StreamSettings,
  ) {}

  /**
   * Starts a turn: the queued Turn at once, or with `stream: false` the finished Turn. A conversation over the
   * limits (100 messages, 20,000 characters each) throws `ConversationTooLongError` before anything is sent.
   */
  async create(params: TurnCreateParams, options: TurnCreateOptions = {}): Promise<Turn> {
    checkConversationLimits(params.messages);
    const { body } = await this.http.request<Turn>({
      method: 'POST',
      path: '/v1/turns',
      body: params,
      ...options,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      timeoutMs: options.timeoutMs ?? (params.stream === false ? BLOCKING_CREATE_TIMEOUT_MS : undefined),
    });
    return body;
  }

  /**
   * Answers the question a turn waits on (`turn.input_required`). Returns what the turn goes on with;
   * `turn.input_received` follows on its stream. Throws `InputNotRequestedError` (409: not this request, or
   * the turn has ended), `InputAlreadyReceivedError` (409), `InputExpiredError` (410: the deadline passed and
   * the turn went on without it), `NotFoundError` (404) or `BadRequestError` (an option it did not offer).
   */
  async respond(turnId: string, answer: TurnInputAnswer, options: TurnRespondOptions = {}): Promise<InputReceived> {
    const { body } = await this.http.request<InputReceived>({
      method: 'POST',
      path: `/v1/turns/${encodeURIComponent(turnId)}/input`,
      body: answer,
      ...options,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    });
    return body;
  }

  /** The Turn, readable forever; while it runs it carries `progress`. */
  async get(turnId: string, options: RequestOptions = {}): Promise<Turn> {
    return (
      await this.http.request<Turn>({ method: 'GET', path: `/v1/turns/${encodeURIComponent(turnId)}`, ...options })
    ).body;
  }

  /**
   * The series a finding of the turn was computed from, for a chart: every day of its window from the
   * turn's snapshot of your data (`{ date, value }`, or `{ date, x, y }` for an association).
   */
  async findingSeries(turnId: string, findingId: string, options: RequestOptions = {}): Promise<FindingSeriesResponse> {
    const path = `/v1/turns/${encodeURIComponent(turnId)}/findings/${encodeURIComponent(findingId)}/series`;
    return (await this.http.request<FindingSeriesResponse>({ method: 'GET', path, ...options })).body;
  }

  /** Your turns, newest first, each as stored (without `progress`). */
  list(params: TurnListParams = {}, options: RequestOptions = {}): PagePromise<Turn> {
    return listPages<Turn>(this.http, '/v1/turns', params, options);
  }

  /**
   * Asks the turn to stop; it then ends `failed` with code `cancelled`. Returns the Turn as it stands
   * (unchanged if it had already ended). Safe to repeat.
   */
  async cancel(turnId: string, options: RequestOptions = {}): Promise<Turn> {
    return (
      await this.http.request<Turn>({
        method: 'POST',
        path: `/v1/turns/${encodeURIComponent(turnId)}/cancel`,
        // Cancelling twice is the same as once: safe to send again after a network failure.
        repeatable: true,
        ...options,
      })
    ).body;
  }

  /** The turn's events, replayed then live, resuming across dropped connections. Nothing is sent until you iterate. */
  stream(turnId: string, options: TurnStreamOptions = {}): TurnStream {
    return new TurnStream(
      turnId,
      {
        transport: this.transport,
        url: this.http.url(`/v1/turns/${encodeURIComponent(turnId)}/events`),
        headers: this.http.authHeaders(),
        getTurn: (signal) => this.get(turnId, { signal }),
      },
      this.streamSettings,
      options,
    );
  }
}
