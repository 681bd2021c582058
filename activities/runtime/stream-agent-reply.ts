import type Anthropic from '@anthropic-ai/sdk';
import type { StreamAgent } from '../../contracts/event-data';
import type { ModelCallId } from '../../contracts/steps';
import type { EventLog } from '../../platform/event-log';
import { ReplyStopped, type LlmRequest, type LlmResponse } from '../../platform/llm';
import type { ModelCallInputs } from './model-call-inputs';
import type { Narration, NarrationSegment } from './narration';
import type { StepDeps } from './step-deps';

const SUMMARY_CHARS = 160;

/**
 * An agent's narration on the event log. `agent.started` and `agent.completed` are deterministic:
 * keyed by agent and `invocation` (the step, or the agent's role in the turn), so a retried activity
 * never announces them twice. The `agent.thought` deltas in between are append-only across a step's
 * attempts (./narration.ts).
 */
export async function announceAgentStarted(
  events: EventLog,
  call: { turnId: string; agent: StreamAgent; invocation: string; question: string; at: Date },
): Promise<void> {
  await events.append(call.turnId, [
    {
      type: 'agent.started',
      data: { agent: call.agent, at: call.at.toISOString(), question: call.question },
      dedupeKey: `agent.started:${call.agent}:${call.invocation}`,
    },
  ]);
}

export async function announceAgentCompleted(
  events: EventLog,
  call: {
    turnId: string;
    agent: StreamAgent;
    invocation: string;
    startedAt: Date;
    at: Date;
    costUsd: number;
    output: string;
  },
): Promise<void> {
  await events.append(call.turnId, [
    {
      type: 'agent.completed',
      data: {
        agent: call.agent,
        at: call.at.toISOString(),
        duration_ms: call.at.getTime() - call.startedAt.getTime(),
        cost_usd: call.costUsd,
        output_summary: call.output.slice(0, SUMMARY_CHARS),
      },
      dedupeKey: `agent.completed:${call.agent}:${call.invocation}`,
    },
  ]);
}

/**
 * What stands between the model's deltas and the log, for an agent that must not show some of what
 * the model writes (the Domain Expert's URLs, synthesis's sentences before the fact-check has traced them):
 * `push` returns what may be written now, `end` the rest.
 */
export interface ThoughtFilter {
  push(delta: string): string;
  end(): string;
  /** True once the filter will take no more of the reply: the model call is stopped there. */
  done?(): boolean;
}

/** Past this much unwritten text, the model stream waits for the event log to catch up. */
const MAX_UNWRITTEN_CHARS = 4096;

/** A streamed reply, and what of it the narration shows (its earlier attempts' text included). */
export interface NarratedResponse extends LlmResponse {
  /** The segment as the narration shows it: what earlier attempts showed of it, then what this one wrote. */
  narrated: string;
}

/**
 * A reply that goes on from text already shown starts where the model's prefill ended, which cannot end in
 * whitespace (the Messages API refuses it): the whitespace that was shown after it is not shown twice.
 */
function joinAfter(shownWhitespace: string, text: string): string {
  const lead = /^\s*/.exec(text)![0];
  if (lead.startsWith(shownWhitespace)) return text.slice(shownWhitespace.length);
  if (shownWhitespace.startsWith(lead)) return text.slice(lead.length);
  return text;
}

/** The reply's message with the prefill in front of its text, as the conversation holds it for a next call. */
function withPrefill(message: Anthropic.Message, prefill: string): Anthropic.Message {
  if (prefill === '') return message;
  const [first, ...rest] = message.content;
  const content: Anthropic.ContentBlock[] =
    first?.type === 'text'
      ? [{ ...first, text: prefill + first.text }, ...rest]
      : [{ type: 'text', text: prefill, citations: null }, ...message.content];
  return { ...message, content };
}

/**
 * Streams one model reply as the agent's `agent.thought` deltas, in the next segment of the step's narration
 * (./narration.ts), with no started/completed brackets. On an attempt after a failure, the reply goes on from
 * what the earlier attempts showed of that segment: the model is given it as the start of its reply, and only
 * what it adds is written, so a client's text is never repeated or taken back.
 *
 * One append is in flight at a time; text that arrives meanwhile is written by the next append as one
 * delta. A slow model gives one event per delta; a fast one costs far fewer transactions
 * than it sends deltas, and the text reaches clients as soon as the log can take it.
 */
export async function streamThoughts<Call extends ModelCallId>(
  { llm }: Pick<StepDeps, 'llm'>,
  call: {
    turnId: string;
    /**
     * The model call streamed (the coach's `health_coach.main`). Its step is the one being attempted
     * (runStepAttempt's), named on every delta as `step.retry` names it.
     */
    modelCall: Call;
    /** What the call's prompt was rendered from. */
    inputs: ModelCallInputs[Call];
    narration: Narration;
    /** The narration's segment to stream into, when the caller opened it; the next one otherwise. */
    segment?: NarrationSegment;
    /**
     * Text the reply goes on from, which is not this segment's (what went out of an answer before its repair):
     * given to the model as the start of its reply, in front of the segment's earlier text, and not written again.
     */
    continues?: string;
    signal: AbortSignal;
    agent: StreamAgent;
    request: LlmRequest;
    /** Passes the deltas through this before they are written; by default they are written as they come. */
    filter?: ThoughtFilter;
    /**
     * Sees the reply's other events (a block's start and stop, a citation: platform/llm's `stream`), in order with
     * its text; text it returns joins the reply there, as if the model had written it (a cited source's name).
     */
    onEvent?: (event: Anthropic.MessageStreamEvent) => string;
  },
): Promise<NarratedResponse> {
  const { turnId, agent, narration } = call;
  const segment = call.segment ?? narration.nextSegment();
  const before = (call.continues ?? '') + segment.earlier;
  const prefill = before.trimEnd();
  const shownWhitespace = before.slice(prefill.length);
  const request: LlmRequest =
    prefill === ''
      ? call.request
      : { ...call.request, messages: [...call.request.messages, { role: 'assistant', content: prefill }] };
  const log: { unwritten: string; writing: Promise<void> | null; failed: { error: unknown } | null } = {
    unwritten: '',
    writing: null,
    failed: null,
  };
  let written = '';
  const writeAll = async () => {
    while (log.unwritten !== '') {
      const delta = log.unwritten;
      log.unwritten = '';
      written += delta;
      await segment.append(agent, delta);
    }
  };
  const startWriting = () =>
    (log.writing ??= writeAll()
      .catch((error: unknown) => void (log.failed = { error }))
      .finally(() => (log.writing = null)));
  // The reply's first characters wait until they show whether they repeat the whitespace already shown.
  let joining = shownWhitespace !== '';
  let leading = '';
  let reply = '';
  const take = (text: string) => {
    reply += text;
    log.unwritten += call.filter ? call.filter.push(text) : text;
  };
  const stream = { turnId, step: call.modelCall, inputs: call.inputs, attempt: narration.attempt, signal: call.signal };
  const drain = async () => {
    // Text can land just as a writer finishes, after its last look: keep writing until none is left.
    while (!log.failed && (log.writing || log.unwritten !== '')) await (log.writing ?? startWriting());
  };
  const onDelta = async (delta: string) => {
    // Throwing here aborts the model call: a log that cannot be written cannot take more text.
    if (log.failed) throw log.failed.error;
    if (joining) {
      leading += delta;
      if (/^\s*$/.test(leading)) return;
      joining = false;
      take(joinAfter(shownWhitespace, leading));
    } else {
      take(delta);
    }
    const inFlight = startWriting();
    if (call.filter?.done?.()) throw new ReplyStopped('the filter takes no more of the reply');
    if (log.unwritten.length > MAX_UNWRITTEN_CHARS) await inFlight;
  };
  const onEvent = call.onEvent;
  const streaming = llm.stream(
    stream,
    request,
    onDelta,
    onEvent &&
      (async (event) => {
        const added = onEvent(event);
        if (added !== '') await onDelta(added);
      }),
  );
  const response = await streaming.catch(async (error: unknown) => {
    // A reply cut short (the connection dropped, the call failed): what was released of it goes out before the
    // step fails, so the next attempt goes on from it rather than writing it again.
    await drain();
    throw error;
  });
  if (call.filter) log.unwritten += call.filter.end();
  await drain();
  if (log.failed) throw log.failed.error;
  return {
    ...response,
    text: before + reply,
    message: withPrefill(response.message, before),
    narrated: segment.earlier + written,
  };
}
