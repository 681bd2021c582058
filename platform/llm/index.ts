/**
 * The LLM layer: every model call of a turn goes through here, so every call is refused once the turn's
 * user has reached a cost cap, is made with its model resolved (an alias to its model id), is billed to
 * the turn in `llm_calls` when it ends under that resolved id (failed attempts included) and counted in
 * the metrics (calls, tokens and cost by model and call id, platform/metrics.ts), the turn's
 * cost warning fires once, and SDK errors reach the workflow as errors its retry policy understands.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ulid } from '../ids';
import type { ZodType } from 'zod';
import { STEP_HEADER, STEP_INPUTS_FIELD, type ModelCallId } from '../../contracts/steps';
import { ConfigError, type Config } from '../config';
import type { Pool } from 'pg';
import type { EventLog } from '../event-log';
import { createLogger, type Logger } from '../logger';
import { metrics } from '../metrics';
import { mapLlmError, ModelOutputInvalidError, type LlmCallOutcome } from './errors';
import type { CostCapGuard } from '../cost-caps';
import { resolveModel, type ModelOverrides } from './models';
import { costUsd } from './prices';
import { traceModelCalls } from './tracing';
import type { Llm, LlmCallContext, LlmRequest, LlmResponse } from './llm';

export type { Llm, LlmRequest, LlmResponse, LlmTool } from './llm';

const ANTHROPIC_API_URL = 'https://api.anthropic.com';
const REQUEST_TIMEOUT_MS = 120_000;

export function createAnthropicClient(config: Pick<Config, 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'>): Anthropic {
  // Temporal retries the activity; retries inside the SDK as well would multiply the attempts.
  // `authToken: null` stops the SDK from picking up ANTHROPIC_AUTH_TOKEN behind the config's back.
  const common = { maxRetries: 0, timeout: REQUEST_TIMEOUT_MS, authToken: null };
  if (config.ANTHROPIC_API_KEY) {
    return new Anthropic({
      ...common,
      apiKey: config.ANTHROPIC_API_KEY,
      baseURL: config.ANTHROPIC_BASE_URL ?? ANTHROPIC_API_URL,
    });
  }
  if (!config.ANTHROPIC_BASE_URL) {
    throw new ConfigError(
      'ANTHROPIC_BASE_URL is required when ANTHROPIC_API_KEY is not set: point it at the scripted model ' +
        '(npm run scripted-model prints its URL), or set ANTHROPIC_API_KEY to use the real API',
    );
  }
  return new Anthropic({ ...common, apiKey: 'scripted', baseURL: config.ANTHROPIC_BASE_URL });
}

/**
 * Whether the model is the scripted one, as platform/config.ts decides it: without ANTHROPIC_API_KEY,
 * ANTHROPIC_BASE_URL names the scripted model server. Only then does the LLM client attach each call's
 * inputs (`sendStepInputs`).
 */
export const isScriptedModel = (config: Pick<Config, 'ANTHROPIC_API_KEY'>): boolean => !config.ANTHROPIC_API_KEY;

/** The `anthropic-beta` flag that web fetch needs (the SDK's BetaWebFetchTool20250910). */
const WEB_FETCH_BETA = 'web-fetch-2025-09-10';

const offersWebFetch = (req: LlmRequest) => req.tools?.some((tool) => tool.type === 'web_fetch_20250910') ?? false;

/**
 * Thrown by a stream's `onDelta` when the caller has all it will take of the reply (the fact-check stopped an
 * answer at a sentence that does not trace): the request is aborted, billed for what was generated (`aborted` in
 * the ledger), and `stream` returns the reply so far instead of failing.
 */
export class ReplyStopped extends Error {
  override name = 'ReplyStopped';
}

/** A row of `llm_calls`, written through `pg`: the ledger is on every model call's path. */
interface LlmCallRow {
  id: string;
  turnId: string;
  step: ModelCallId;
  model: string;
  attempt: number;
  outcome: LlmCallOutcome;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  durationMs: number;
  requestId: string | null;
  errorMessage: string | null;
  createdAt: Date;
}

/** Beyond this many unwritten ledger rows (a long outage), the oldest are dropped, with a warning. */
const MAX_UNWRITTEN_ROWS = 10_000;

export interface LlmDeps {
  anthropic: Anthropic;
  pool: Pick<Pool, 'query'>;
  events: EventLog;
  /** A turn whose recorded calls add up to this much gets one `cost_warning` event. */
  costWarnUsd: number;
  /**
   * Attach each call's inputs to the request (`amy_step_inputs`, contracts/steps.ts): true only for the
   * scripted model (isScriptedModel). The real API rejects unknown fields, and needs only the prompt.
   */
  sendStepInputs: boolean;
  /** Where a ledger write that has to wait for Postgres is reported. */
  logger?: Pick<Logger, 'warn'>;
  /** ANTHROPIC_DEFAULT_*_MODEL: what the aliases resolve to instead of their own ids. */
  modelOverrides?: ModelOverrides;
  /** Refuses a turn's next call once its user reached a cost cap (platform/cost-caps.ts); absent: no caps. */
  costCapGuard?: CostCapGuard;
}

interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  /** The server tools' requests, billed per request on top of the tokens (./prices.ts). */
  server_tool_use?: { web_search_requests: number } | null;
}

const NO_USAGE: TokenUsage = { input_tokens: 0, output_tokens: 0 };
const MAX_ERROR_MESSAGE_CHARS = 2000;

interface CallEnding {
  outcome: LlmCallOutcome;
  usage: TokenUsage;
  requestId: string | null;
  errorMessage?: string;
}

const textOf = (message: Anthropic.Message) =>
  message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

const errorMessageOf = (err: unknown) =>
  (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, MAX_ERROR_MESSAGE_CHARS);

export function createLlm({
  anthropic,
  pool,
  events,
  costWarnUsd,
  sendStepInputs,
  logger = createLogger('worker'),
  modelOverrides = {},
  costCapGuard = async () => undefined,
}: LlmDeps): Llm {
  /**
   * Checks the cost caps and resolves the model, before a call is made: from here on the request is the
   * resolved one, so the API, the ledger and the price see one id.
   */
  async function prepare(ctx: LlmCallContext, req: LlmRequest): Promise<LlmRequest> {
    await costCapGuard(ctx.turnId);
    return { ...req, model: resolveModel(req.model, modelOverrides) };
  }

  function toParams(ctx: LlmCallContext, req: LlmRequest): Anthropic.MessageStreamParams {
    const params: Anthropic.MessageStreamParams = {
      model: req.model,
      max_tokens: req.maxTokens,
      messages: req.messages,
      system: req.system,
      // Web fetch's tool type is the beta one; the SDK sends the tools array as JSON whatever their type.
      tools: req.tools as Anthropic.ToolUnion[] | undefined,
      temperature: req.temperature,
    };
    // The SDK sends the params object as the JSON body, so the field travels as it is.
    return sendStepInputs ? Object.assign(params, { [STEP_INPUTS_FIELD]: ctx.inputs }) : params;
  }

  const requestOptions = (ctx: LlmCallContext, req: LlmRequest) => ({
    headers: { [STEP_HEADER]: ctx.step, ...(offersWebFetch(req) ? { 'anthropic-beta': WEB_FETCH_BETA } : {}) },
    signal: ctx.signal,
  });

  /** Appends the turn's cost warning once what its calls cost so far reaches the threshold. */
  async function warnIfOverBudget(turnId: string, costSoFar: number): Promise<void> {
    if (costSoFar < costWarnUsd) return;
    // The dedupe key makes this a no-op once the turn has its warning.
    await events.append(turnId, [
      {
        type: 'cost_warning',
        data: { cost_usd: costSoFar, threshold_usd: costWarnUsd, at: new Date().toISOString() },
        dedupeKey: 'cost_warning',
      },
    ]);
  }

  /**
   * Ledger rows that could not be written because Postgres was away. The calls happened and were paid
   * for, so their rows wait here and go in with the next row this process writes (a retried step's
   * call, typically). Only a process that dies while Postgres is still down loses them.
   */
  const unwritten: LlmCallRow[] = [];

  /**
   * Writes the row (and any kept back) and returns what the row's turn has spent so far, or null if
   * Postgres could not take it. One statement: the insert, and the turns' running totals
   * (`turns.llm_cost_usd`) raised by what was inserted. The total is race-free with a parallel call of the
   * same turn: the UPDATE waits for the other's row lock and adds to the total it committed, so the later
   * of two calls sees both (a SUM over the ledger in the same statement would see neither's row).
   */
  async function writeLedger(row: LlmCallRow): Promise<number | null> {
    const batch = [...unwritten.splice(0), row];
    try {
      const column = <K extends keyof LlmCallRow>(key: K) => batch.map((row) => row[key]);
      const totals = await pool.query<{ id: string; total: string }>(
        // created_at is when the call ended (a timestamptz): a row kept until Postgres came back keeps its time.
        `WITH written AS (
           INSERT INTO llm_calls (id, turn_id, step, model, attempt, outcome, input_tokens, output_tokens, cost_usd,
             duration_ms, request_id, error_message, created_at)
           SELECT id, turn_id, step, model, attempt, outcome, input_tokens, output_tokens, cost_usd, duration_ms,
             request_id, error_message, ended_at
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $8::int[],
             $9::numeric[], $10::int[], $11::text[], $12::text[], $13::timestamptz[])
             AS c (id, turn_id, step, model, attempt, outcome, input_tokens, output_tokens, cost_usd, duration_ms,
               request_id, error_message, ended_at)
           RETURNING turn_id, cost_usd
         ), spent AS (SELECT turn_id, SUM(cost_usd) AS cost FROM written GROUP BY turn_id)
         UPDATE turns t SET llm_cost_usd = t.llm_cost_usd + spent.cost FROM spent WHERE t.id = spent.turn_id
         RETURNING t.id, t.llm_cost_usd::text AS total`,
        [
          column('id'),
          column('turnId'),
          column('step'),
          column('model'),
          column('attempt'),
          column('outcome'),
          column('inputTokens'),
          column('outputTokens'),
          column('costUsd'),
          column('durationMs'),
          column('requestId'),
          column('errorMessage'),
          batch.map((row) => row.createdAt.toISOString()),
        ],
      );
      const own = totals.rows.find((t) => t.id === row.turnId);
      return own ? Number(own.total) : 0;
    } catch (err) {
      unwritten.push(...batch.slice(-MAX_UNWRITTEN_ROWS));
      logger.warn('llm_calls rows kept in memory until Postgres is back', {
        rows: unwritten.length,
        error: String(err),
      });
      return null;
    }
  }

  /** Writes the ledger row for a call that has ended; returns what it cost. */
  async function recordCall(ctx: LlmCallContext, model: string, startedAt: number, ending: CallEnding) {
    const cost = costUsd(model, ending.usage.input_tokens, ending.usage.output_tokens, {
      webSearchRequests: ending.usage.server_tool_use?.web_search_requests ?? 0,
    });
    const row: LlmCallRow = {
      id: `llm_${ulid()}`,
      turnId: ctx.turnId,
      step: ctx.step,
      model,
      attempt: ctx.attempt,
      outcome: ending.outcome,
      inputTokens: ending.usage.input_tokens,
      outputTokens: ending.usage.output_tokens,
      costUsd: cost,
      durationMs: Date.now() - startedAt,
      requestId: ending.requestId,
      errorMessage: ending.errorMessage ?? null,
      // When the call ended, not when a delayed row reached Postgres.
      createdAt: new Date(),
    };
    metrics.modelCallEnded(row);
    const costSoFar = await writeLedger(row);
    if (costSoFar !== null) await warnIfOverBudget(ctx.turnId, costSoFar);
    return cost;
  }

  /** Records a failed call and returns the error to throw in its place. */
  async function recordFailure(
    ctx: LlmCallContext,
    model: string,
    startedAt: number,
    err: unknown,
    soFar: { usage: TokenUsage; requestId: string | null },
  ): Promise<unknown> {
    const mapped = mapLlmError(err);
    await recordCall(ctx, model, startedAt, {
      outcome: mapped?.outcome ?? 'internal_error',
      usage: soFar.usage,
      requestId: mapped?.error.requestId ?? soFar.requestId,
      errorMessage: errorMessageOf(err),
    });
    return mapped?.error ?? err;
  }

  /** Records a successful call under the resolved model, as failed attempts are, so a step's rows agree. */
  async function recordSuccess(
    ctx: LlmCallContext,
    req: LlmRequest,
    startedAt: number,
    message: Anthropic.Message,
    requestId: string | null,
  ): Promise<LlmResponse> {
    const cost = await recordCall(ctx, req.model, startedAt, { outcome: 'success', usage: message.usage, requestId });
    return { text: textOf(message), message, costUsd: cost, requestId };
  }

  return traceModelCalls(modelOverrides, {
    async complete(ctx, requested) {
      const req = await prepare(ctx, requested);
      const startedAt = Date.now();
      let result: { data: Anthropic.Message; request_id: string | null | undefined };
      try {
        result = await anthropic.messages
          .create({ ...toParams(ctx, req), stream: false }, requestOptions(ctx, req))
          .withResponse();
      } catch (err) {
        throw await recordFailure(ctx, req.model, startedAt, err, { usage: NO_USAGE, requestId: null });
      }
      return recordSuccess(ctx, req, startedAt, result.data, result.request_id ?? null);
    },

    async stream(ctx, requested, onDelta, onEvent) {
      const req = await prepare(ctx, requested);
      const startedAt = Date.now();
      const stream = anthropic.messages.stream(toParams(ctx, req), requestOptions(ctx, req));
      const soFar = () => ({ usage: stream.currentMessage?.usage ?? NO_USAGE, requestId: stream.request_id ?? null });
      let ending: { message: Anthropic.Message } | { sinkError: unknown };
      try {
        ending = (await deliverStream(stream, onDelta, onEvent)) ?? { message: await stream.finalMessage() };
      } catch (err) {
        throw await recordFailure(ctx, req.model, startedAt, err, soFar());
      }
      if ('sinkError' in ending) {
        // The request was aborted; bill what was generated and hand the caller its own error back, or, when it
        // stopped the reply on purpose, the reply so far.
        const stopped = ending.sinkError instanceof ReplyStopped ? stream.currentMessage : undefined;
        const costUsd = await recordCall(ctx, req.model, startedAt, {
          outcome: 'aborted',
          ...soFar(),
          errorMessage: stopped
            ? `stopped by the caller: ${errorMessageOf(ending.sinkError)}`
            : `onDelta failed: ${errorMessageOf(ending.sinkError)}`,
        });
        if (stopped) return { text: textOf(stopped), message: stopped, costUsd, requestId: stream.request_id ?? null };
        throw ending.sinkError;
      }
      return recordSuccess(ctx, req, startedAt, ending.message, stream.request_id ?? null);
    },
  });
}

/** The events a caller of `stream` is shown besides the text: a block's start and stop, a tool's input, a citation. */
const isBlockEvent = (event: Anthropic.MessageStreamEvent) =>
  event.type === 'content_block_start' ||
  event.type === 'content_block_stop' ||
  (event.type === 'content_block_delta' &&
    (event.delta.type === 'citations_delta' || event.delta.type === 'input_json_delta'));

/**
 * Hands each text delta to onDelta, and each block event to onEvent, one at a time and in order. If either
 * throws, the caller cannot take more of the reply: leaving the loop aborts the request so we stop paying for
 * it, and the error is returned rather than thrown so it is not mistaken for an SDK failure.
 */
async function deliverStream(
  stream: AsyncIterable<Anthropic.MessageStreamEvent>,
  onDelta: (delta: string) => Promise<void>,
  onEvent: ((event: Anthropic.MessageStreamEvent) => Promise<void>) | undefined,
): Promise<{ sinkError: unknown } | null> {
  for await (const event of stream) {
    try {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') await onDelta(event.delta.text);
      else if (onEvent && isBlockEvent(event)) await onEvent(event);
    } catch (sinkError) {
      return { sinkError };
    }
  }
  return null;
}

const FENCED_BLOCK = /```(?:json)?\s*([\s\S]*?)```/i;

/** Index of the bracket closing the one at `start`, skipping brackets inside strings; -1 if unclosed. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Every complete JSON object or array in the text, in order of appearance. */
function* jsonValuesIn(text: string): Generator<unknown> {
  for (let start = text.search(/[{[]/); start !== -1;) {
    const end = closingBracket(text, start);
    if (end !== -1) {
      try {
        yield JSON.parse(text.slice(start, end + 1));
      } catch {
        // Bracketed prose such as "[note]": not JSON, keep looking.
      }
    }
    const next = text.slice(start + 1).search(/[{[]/);
    start = next === -1 ? -1 : start + 1 + next;
  }
}

/**
 * The first JSON value in a model's answer that matches the schema, looking inside a ```json fence
 * first. Models wrap JSON in prose and fences; anything else is a ModelOutputInvalidError.
 */
export function parseModelJson<T>(text: string, schema: ZodType<T>, requestId: string | null = null): T {
  const fenced = FENCED_BLOCK.exec(text);
  // The error names the output's size, never its text: a model's answer can quote the user's health data.
  const size = `${text.length} characters`;
  let firstMismatch: string | null = null;
  for (const candidate of fenced ? [fenced[1], text] : [text]) {
    for (const value of jsonValuesIn(candidate)) {
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      firstMismatch ??= parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    }
  }
  throw new ModelOutputInvalidError(
    firstMismatch === null
      ? `model output (${size}) contains no complete JSON value`
      : `model output JSON (${size}) does not match the expected shape: ${firstMismatch}`,
    { requestId },
  );
}
