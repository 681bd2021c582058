/**
 * Pacing: the scripted model answering as slowly as a real one, for load runs that need turns of a
 * realistic length (`npm run load -- --pace realistic`, or `SCRIPTED_MODEL_PACE=realistic`). Off by
 * default: tests and the demo get their answers at once.
 *
 * A paced answer waits the model's time to first token, then streams the rule's text at the model's output
 * speed, and holds the stream open (its `message_delta` and `message_stop`) until the call's whole output
 * would have been generated. A rule's text is shorter than what a real model writes for the call: it
 * stands for the opening of that output, which a real model writes first, at its speed. So a first sentence
 * arrives as soon after the first token as with a real model, and the call ends when a real one would. What
 * is generated is unchanged; the stream is split as finely as the call's modelled length (`outputTokens`)
 * says, so the service sees a real call's number of deltas and its duration. The usage the answer reports
 * stays the text's own, so cost accounting is as without pacing.
 *
 * A reply that stops for a tool call (`stop_reason: tool_use`) is as long as what precedes the call: the
 * model stops writing there and waits for the tool's result. It is modelled at `toolCallTokens` (a
 * sentence and the tool's input), not at the call's whole answer, which the next call writes.
 *
 * Default speeds, from Artificial Analysis's published measurements of Anthropic's API (2025):
 * Claude Sonnet 4.5 63 output tokens/s and 1.8 s to first token, Claude Opus 4.1 45 tokens/s and 2.67 s
 * (Sonnet 4: 59 tokens/s). A model whose name says `opus` is paced as Opus, any other as Sonnet (the
 * pipeline's fast steps run on Sonnet, as the product contract sets them). The output lengths are this
 * pipeline's own estimates of what each call writes (a routing label is a few tokens, a synthesis
 * several paragraphs); with them a knowledge turn (classify, route, rephrase, two Domain Expert calls,
 * synthesis, memory) lasts about a minute, as with a real model.
 */
import type { ModelCallId } from '../../contracts/steps';

export interface ModelSpeed {
  /** From the request to the first content delta (to the whole answer when it is not streamed). */
  firstTokenMs: number;
  /** Output tokens generated per second after the first. */
  tokensPerSecond: number;
}

export interface Pacing {
  /** Speeds by model family: `opus` for a model whose name contains it, `sonnet` for every other. */
  speeds: { opus: ModelSpeed; sonnet: ModelSpeed };
  /** Output tokens per streamed delta: the Messages API sends a few tokens per `content_block_delta`. */
  tokensPerDelta: number;
  /** The output length a real model writes for each call, in tokens, before `outputScale`. */
  outputTokens: Record<ModelCallId, number>;
  /** Multiplies every call's output length: 2 makes every turn's generating about twice as long. */
  outputScale: number;
  /** The output length of a reply that stops for a tool call, before `outputScale`. */
  toolCallTokens: number;
}

const REALISTIC_OUTPUT_TOKENS: Record<ModelCallId, number> = {
  classify_vagueness: 5,
  clarify: 60,
  investigator_hypotheses: 400,
  investigator_briefing: 600,
  route: 40,
  fallback_reply: 250,
  rephrase: 80,
  ds_plan: 300,
  ds_code: 400,
  ds_debug: 400,
  ds_summary: 200,
  ds_extract: 200,
  domain_expert: 400,
  'health_coach.gate': 5,
  'health_coach.main': 600,
  'health_coach.finish': 100,
  'health_coach.summary': 150,
  reflection: 150,
  critic: 250,
  assessment: 250,
  synthesis: 800,
  memory: 150,
};

export const REALISTIC_PACING: Pacing = {
  speeds: {
    opus: { firstTokenMs: 2670, tokensPerSecond: 45 },
    sonnet: { firstTokenMs: 1800, tokensPerSecond: 63 },
  },
  tokensPerDelta: 4,
  outputTokens: REALISTIC_OUTPUT_TOKENS,
  outputScale: 1,
  toolCallTokens: 60,
};

/** Overrides of the realistic pacing: one speed for every model, a finer or coarser stream, longer answers. */
export interface PacingOverrides {
  firstTokenMs?: number;
  tokensPerSecond?: number;
  tokensPerDelta?: number;
  outputScale?: number;
}

export function realisticPacing(overrides: PacingOverrides = {}): Pacing {
  const speed = (base: ModelSpeed): ModelSpeed => ({
    firstTokenMs: overrides.firstTokenMs ?? base.firstTokenMs,
    tokensPerSecond: overrides.tokensPerSecond ?? base.tokensPerSecond,
  });
  const pacing: Pacing = {
    ...REALISTIC_PACING,
    speeds: {
      opus: speed(REALISTIC_PACING.speeds.opus),
      sonnet: speed(REALISTIC_PACING.speeds.sonnet),
    },
    tokensPerDelta: overrides.tokensPerDelta ?? REALISTIC_PACING.tokensPerDelta,
    outputScale: overrides.outputScale ?? REALISTIC_PACING.outputScale,
  };
  const { firstTokenMs, tokensPerSecond } = pacing.speeds.opus;
  if (!(firstTokenMs >= 0) || !(tokensPerSecond > 0) || !(pacing.tokensPerDelta > 0) || !(pacing.outputScale > 0)) {
    throw new Error('pacing: time to first token ≥ 0, and tokens per second, tokens per delta and scale > 0');
  }
  return pacing;
}

/** The speed `model` is paced at: its family's. */
export const speedOf = (pacing: Pacing, model: string): ModelSpeed =>
  /opus/i.test(model) ? pacing.speeds.opus : pacing.speeds.sonnet;

/** One paced answer: how finely it streams and how long it takes. */
export interface PacedAnswer {
  /** How many content deltas to split the answer's blocks into, all blocks together. */
  deltas: number;
  /** From the request's arrival to the first content delta (to the whole answer, not streamed). */
  firstTokenMs: number;
  /** From the first token to the last: the modelled output at the model's speed. */
  generatingMs: number;
}

/**
 * The pacing of one answer: `call` by `model`, whose actual text is `actualTokens` long. The modelled
 * length is the call's, scaled (a reply that `stopsForTool` is modelled at `toolCallTokens`), and never
 * shorter than the text itself; `maxDeltas` caps the split at what the text can be cut into (one
 * character per delta).
 */
export function paceAnswer(
  pacing: Pacing,
  call: ModelCallId,
  model: string,
  actualTokens: number,
  maxDeltas: number,
  stopsForTool = false,
): PacedAnswer {
  const speed = speedOf(pacing, model);
  const modelled = stopsForTool ? pacing.toolCallTokens : pacing.outputTokens[call];
  const tokens = Math.max(actualTokens, Math.round(modelled * pacing.outputScale), 1);
  return {
    deltas: Math.max(1, Math.min(maxDeltas, Math.ceil(tokens / pacing.tokensPerDelta))),
    firstTokenMs: speed.firstTokenMs,
    generatingMs: (1000 * tokens) / speed.tokensPerSecond,
  };
}

/**
 * When the `i`-th of `n` deltas (0-based) is due, in ms from the request's arrival, were the text spread
 * evenly over the whole output: the first at the first token, then one each time another n-th of the
 * output has been generated. The paced stream never sends a delta later than this.
 */
export const deltaDueMs = (answer: PacedAnswer, i: number, n: number) =>
  answer.firstTokenMs + (i * answer.generatingMs) / n;

/**
 * When a delta is due that follows `tokensBefore` tokens of the answer's text, in ms from the request's arrival:
 * the text streams at the model's speed from its first token, as a real model writes the opening of its output.
 */
const textDueMs = (answer: PacedAnswer, speed: ModelSpeed, tokensBefore: number) =>
  answer.firstTokenMs + (1000 * tokensBefore) / speed.tokensPerSecond;

/**
 * When the `i`-th of `n` deltas is due, following `tokensBefore` tokens of the text: at the model's speed from
 * its first token, and never later than were the text spread over the whole modelled output.
 */
export const streamedDeltaDueMs = (
  answer: PacedAnswer,
  speed: ModelSpeed,
  tokensBefore: number,
  i: number,
  n: number,
) => Math.min(textDueMs(answer, speed, tokensBefore), deltaDueMs(answer, i, n));

/** When the whole answer is due: a non-streamed answer is sent then, and a stream's last events. */
export const answerDueMs = (answer: PacedAnswer) => answer.firstTokenMs + answer.generatingMs;

/**
 * Splits `text` into `n` consecutive pieces of as equal a length as its code points allow (never a
 * surrogate pair cut in two); joined, they give back the text. Fewer pieces when the text is shorter.
 */
export function splitEvenly(text: string, n: number): string[] {
  const points = Array.from(text);
  const count = Math.max(1, Math.min(n, points.length));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    pieces.push(
      points.slice(Math.floor((i * points.length) / count), Math.floor(((i + 1) * points.length) / count)).join(''),
    );
  }
  return pieces;
}
