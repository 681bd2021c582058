import type Anthropic from '@anthropic-ai/sdk';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STEP_HEADER, isModelCallId, type ModelCallId } from '../../contracts/steps';
import type { FaultController } from './faults';
import { pause, readJsonBody, sendApiError, sendJson, writeChunk } from './http';
import { buildMessage, CHARS_PER_TOKEN, estimateTokens, malformedVariant } from './message-response';
import { parseMessagesRequest, requestText, toScriptedRequest } from './messages-request';
import type { RequestLog } from './request-log';
import { parseStepInputs } from './step-inputs';
import {
  answerDueMs,
  paceAnswer,
  speedOf,
  streamedDeltaDueMs,
  type ModelSpeed,
  type PacedAnswer,
  type Pacing,
} from './pacing';
import { encodeSse, messageStreamEvents, streamableLength } from './sse';
import type { ScriptedResponse, ScriptedRule } from './types';
import { scriptedWeb } from './web-tools';

export interface MessagesEndpointDeps {
  rules: ReadonlyMap<ModelCallId, ScriptedRule>;
  faults: FaultController;
  requests: RequestLog;
  /** Pause before each content delta of a stream, so tests and demos can watch text arrive. */
  streamChunkDelayMs: number;
  /** Answer as slowly as a real model (./pacing.ts); null answers at once. */
  pacing: Pacing | null;
}

interface StreamOptions {
  chunkDelayMs: number;
  /** A paced answer's schedule at its model's `speed`, timed from `arrivedAt` (performance.now()). */
  paced: { answer: PacedAnswer; speed: ModelSpeed; arrivedAt: number } | null;
  /** `stream_cut`: send half of the deltas, then drop the connection. */
  cutHalfway: boolean;
  closed: AbortSignal;
}

/** The beta flag web fetch needs, as the Messages API names it. */
const WEB_FETCH_BETA = 'web-fetch-2025-09-10';

/** The request's `anthropic-beta` flags (comma-separated in one header, as the SDK sends them). */
function betaFlags(req: IncomingMessage): string[] {
  const header = req.headers['anthropic-beta'];
  return (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((flag) => flag.trim());
}

/** The text of a last assistant message: the start of the reply the client asks the model to go on from. */
function prefillOf(messages: Anthropic.MessageParam[]): string | null {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return null;
  if (typeof last.content === 'string') return last.content;
  return last.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/**
 * The rule's answer as a model that had already written `prefill` goes on with it: the rest, when its answer
 * starts so (the same answer, resumed); otherwise a fresh start after it, as a model that cannot pick up its own
 * thread would write one.
 */
function continueAfter(prefill: string | null, answer: ScriptedResponse): ScriptedResponse {
  if (prefill === null || answer.text === undefined) return answer;
  const text = answer.text.startsWith(prefill) ? answer.text.slice(prefill.length) : `\n\n${answer.text}`;
  return { ...answer, text };
}

/** Waits until `dueMs` after `arrivedAt`: the schedule is kept from the arrival, so slow writes do not add up. */
const pauseUntil = (arrivedAt: number, dueMs: number, closed: AbortSignal) =>
  pause(Math.max(0, arrivedAt + dueMs - performance.now()), closed);

/** The characters a content delta carries: text, or a tool input's JSON. */
function deltaLength(event: { data: unknown }): number {
  const { delta } = event.data as { delta: { text?: string; partial_json?: string } };
  return Array.from(delta.text ?? delta.partial_json ?? '').length;
}

async function streamMessage(res: ServerResponse, message: Anthropic.Message, options: StreamOptions): Promise<void> {
  const { paced } = options;
  const events = messageStreamEvents(message, paced?.answer.deltas);
  const deltaCount = events.filter((e) => e.event === 'content_block_delta').length;
  const cutAfter = options.cutHalfway ? Math.floor(deltaCount / 2) : Infinity;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let deltasSent = 0;
  let charsSent = 0;
  for (const event of events) {
    if (event.event === 'content_block_delta') {
      if (deltasSent === cutAfter) {
        res.socket?.destroy();
        return;
      }
      if (paced) {
        await pauseUntil(
          paced.arrivedAt,
          streamedDeltaDueMs(paced.answer, paced.speed, charsSent / CHARS_PER_TOKEN, deltasSent, deltaCount),
          options.closed,
        );
      }
      deltasSent++;
      charsSent += deltaLength(event);
      if (options.chunkDelayMs > 0) await pause(options.chunkDelayMs, options.closed);
    } else if (paced && event.event === 'message_delta') {
      await pauseUntil(paced.arrivedAt, answerDueMs(paced.answer), options.closed);
    }
    if (options.closed.aborted) return;
    await writeChunk(res, encodeSse(event));
  }
  res.end();
}

/**
 * `POST /v1/messages`: validate (the body, the call named by `x-amy-step`, and the call's inputs), log,
 * apply a queued fault if one matches, answer from the call's rule. The platform's LLM client always
 * sends the header and, talking to this server, the inputs.
 */
export function createMessagesEndpoint({ rules, faults, requests, streamChunkDelayMs, pacing }: MessagesEndpointDeps) {
  return async function handleMessages(req: IncomingMessage, res: ServerResponse, closed: AbortSignal) {
    const arrivedAt = performance.now();
    const parsed = parseMessagesRequest(await readJsonBody(req));
    if (!parsed.ok) return sendApiError(res, 400, 'invalid_request_error', parsed.message);
    const request = parsed.request;
    const stepHeader = req.headers[STEP_HEADER];
    const step = typeof stepHeader === 'string' && stepHeader !== '' ? stepHeader : null;
    const call = step !== null && isModelCallId(step) ? step : null;
    const rule = call === null ? undefined : rules.get(call);
    const inputs = call !== null && rule ? parseStepInputs(call, request.stepInputs) : null;
    const fault = call !== null && inputs?.ok ? faults.take(call, request.stream) : null;
    requests.add({
      step,
      inputs: request.stepInputs ?? null,
      model: request.model,
      system: request.system,
      messages: request.messages,
      stream: request.stream,
      tools: [...request.tools, ...request.serverTools].map((tool) => tool.name),
      betas: betaFlags(req).filter((flag) => flag !== ''),
      fault: fault?.kind ?? null,
      at: new Date().toISOString(),
    });

    if (step === null) {
      return sendApiError(
        res,
        400,
        'invalid_request_error',
        `${STEP_HEADER} header is required: rules answer per step`,
      );
    }
    if (call === null || !rule || !inputs) {
      return sendApiError(res, 400, 'invalid_request_error', `No scripted rule for step "${step}"`);
    }
    if (!inputs.ok) return sendApiError(res, 400, 'invalid_request_error', inputs.message);
    if (request.serverTools.some((t) => t.type === 'web_fetch_20250910') && !betaFlags(req).includes(WEB_FETCH_BETA)) {
      return sendApiError(
        res,
        400,
        'invalid_request_error',
        `tools: web_fetch_20250910 is a beta tool: it needs the header anthropic-beta: ${WEB_FETCH_BETA}`,
      );
    }

    switch (fault?.kind) {
      case 'overloaded':
        return sendApiError(res, 529, 'overloaded_error', 'Overloaded');
      case 'server_error':
        return sendApiError(res, 500, 'api_error', 'Internal server error');
      case 'hang':
        // Never answered: the client's timeout or abort ends it (or close() of the server).
        return;
      case 'slow':
        await pause(fault.delay_ms, closed);
        if (closed.aborted) return;
        break;
    }

    // A reply the client started (the Messages API's prefill): the rule answers the conversation before it, and
    // the model goes on from where the prefill ends, as a real one does.
    const prefill = prefillOf(request.messages);
    if (prefill !== null && /\s$/.test(prefill)) {
      return sendApiError(
        res,
        400,
        'invalid_request_error',
        'final assistant content cannot end with trailing whitespace',
      );
    }
    const conversation = prefill === null ? request : { ...request, messages: request.messages.slice(0, -1) };
    const web = scriptedWeb(request.serverTools, fault?.kind === 'web_tools_unavailable');
    const answer = continueAfter(prefill, rule.respond(toScriptedRequest(call, inputs.inputs, conversation, web)));
    const message = buildMessage({
      model: request.model,
      maxTokens: request.maxTokens,
      inputTokens: estimateTokens(requestText(request)),
      response: fault?.kind === 'malformed' ? malformedVariant(answer) : answer,
    });
    const paced = pacing
      ? paceAnswer(
          pacing,
          call,
          request.model,
          message.usage.output_tokens,
          streamableLength(message),
          message.stop_reason === 'tool_use',
        )
      : null;
    if (!request.stream) {
      if (paced) await pauseUntil(arrivedAt, answerDueMs(paced), closed);
      if (closed.aborted) return;
      return sendJson(res, 200, message);
    }
    await streamMessage(res, message, {
      chunkDelayMs: streamChunkDelayMs,
      paced: pacing && paced && { answer: paced, speed: speedOf(pacing, request.model), arrivedAt },
      cutHalfway: fault?.kind === 'stream_cut',
      closed,
    });
  };
}
