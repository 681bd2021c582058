/**
 * The scripted model's realistic pacing (dev/scripted-model/pacing.ts): the schedule of one answer (time to
 * first token, output speed by model, each call's output length, the stream's grain), the even split that
 * gives back the text exactly, and a paced server through the real Anthropic SDK: the text and the usage
 * are the rule's own, only the split (and the timing, which is not asserted) follows the modelled length.
 */
import Anthropic from '@anthropic-ai/sdk';
import {
  answerDueMs,
  deltaDueMs,
  paceAnswer,
  REALISTIC_PACING,
  realisticPacing,
  splitEvenly,
} from '../../dev/scripted-model/pacing';
import { startScriptedModelServer, type ScriptedModelServer } from '../../dev/scripted-model/server';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { defaultRules } from '../../dev/scripted-model/rules';
import { STEP_INPUTS_FIELD, type ModelCallId } from '../../contracts/steps';

describe('the schedule of one answer', () => {
  test('an Opus call: its time to first token, then its output length at its speed, in deltas of 4 tokens', () => {
    const answer = paceAnswer(REALISTIC_PACING, 'synthesis', 'claude-opus-4-7', 120, 10_000);
    expect(answer).toEqual({ deltas: 200, firstTokenMs: 2670, generatingMs: (1000 * 800) / 45 });
    expect(deltaDueMs(answer, 0, answer.deltas)).toBe(2670);
    expect(deltaDueMs(answer, 100, 200)).toBeCloseTo(2670 + (1000 * 400) / 45, 6);
    expect(deltaDueMs(answer, 199, 200)).toBeLessThan(answerDueMs(answer));
    expect(answerDueMs(answer)).toBeCloseTo(2670 + (1000 * 800) / 45, 6);
  });

  test('any other model is paced as Sonnet', () => {
    expect(paceAnswer(REALISTIC_PACING, 'route', 'claude-sonnet-4-6', 3, 100)).toEqual({
      deltas: 10,
      firstTokenMs: 1800,
      generatingMs: (1000 * 40) / 63,
    });
    expect(paceAnswer(REALISTIC_PACING, 'route', 'some-gateway/model', 3, 100).firstTokenMs).toBe(1800);
  });

  test('never shorter than the text itself, never split finer than its characters, at least one delta', () => {
    expect(paceAnswer(REALISTIC_PACING, 'classify_vagueness', 'sonnet', 500, 10_000).generatingMs).toBeCloseTo(
      (1000 * 500) / 63,
      6,
    );
    expect(paceAnswer(REALISTIC_PACING, 'synthesis', 'opus', 10, 37).deltas).toBe(37);
    expect(paceAnswer(REALISTIC_PACING, 'classify_vagueness', 'sonnet', 1, 0).deltas).toBe(1);
  });

  test('overrides: one speed for every model, the grain and a scale on every length', () => {
    const pacing = realisticPacing({ firstTokenMs: 500, tokensPerSecond: 100, tokensPerDelta: 10, outputScale: 2 });
    for (const model of ['claude-opus-4-7', 'claude-sonnet-4-6']) {
      expect(paceAnswer(pacing, 'synthesis', model, 1, 10_000)).toEqual({
        deltas: 160,
        firstTokenMs: 500,
        generatingMs: 16_000,
      });
    }
    expect(() => realisticPacing({ tokensPerSecond: 0 })).toThrow(/tokens per second/);
    expect(() => realisticPacing({ firstTokenMs: -1 })).toThrow(/first token/);
  });

  test('a knowledge turn (classify, route, rephrase, two Domain Expert calls, synthesis, memory) lasts about a minute', () => {
    const calls: Array<[ModelCallId, string]> = [
      ['classify_vagueness', 'sonnet'],
      ['route', 'sonnet'],
      ['rephrase', 'sonnet'],
      ['domain_expert', 'opus'],
      ['domain_expert', 'opus'],
      ['synthesis', 'opus'],
      ['memory', 'sonnet'],
    ];
    const seconds =
      calls.reduce((ms, [call, model]) => ms + answerDueMs(paceAnswer(REALISTIC_PACING, call, model, 1, 1e6)), 0) /
      1000;
    expect(seconds).toBeGreaterThan(45);
    expect(seconds).toBeLessThan(75);
  });
});

describe('splitEvenly', () => {
  test('n pieces of as equal a length as possible, joined back exactly', () => {
    const text = 'Resting heart rate is usually between 60 and 100 beats per minute.';
    const pieces = splitEvenly(text, 7);
    expect(pieces).toHaveLength(7);
    expect(pieces.join('')).toBe(text);
    const lengths = pieces.map((p) => p.length);
    expect(Math.max(...lengths) - Math.min(...lengths)).toBeLessThanOrEqual(1);
  });

  test('fewer pieces than asked for when the text is shorter, and a surrogate pair is never cut', () => {
    expect(splitEvenly('abc', 10)).toEqual(['a', 'b', 'c']);
    expect(splitEvenly('a😀b', 3)).toEqual(['a', '😀', 'b']);
    expect(splitEvenly('', 4)).toEqual(['']);
  });
});

describe('a paced server through the SDK', () => {
  const TEXT = 'Heart rate variability is the variation in time between heartbeats, measured in milliseconds.';
  const rule: ScriptedRule = { step: 'fallback_reply', respond: () => ({ text: TEXT }) };
  const toolRule: ScriptedRule = {
    step: 'domain_expert',
    respond: () => ({ text: 'Checking.', toolUse: [{ name: 'range_compare', input: { marker: 'hrv', value: 42 } }] }),
  };
  // Instant, so the test takes no time: what is checked is the split, not the clock.
  const pacing = realisticPacing({ firstTokenMs: 0, tokensPerSecond: 1e9, tokensPerDelta: 2 });
  let server: ScriptedModelServer;
  let client: Anthropic;

  beforeAll(async () => {
    const replaced = [rule.step, toolRule.step];
    server = await startScriptedModelServer({
      rules: [...defaultRules.filter((r) => !replaced.includes(r.step)), rule, toolRule],
      pacing,
    });
    client = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(() => server.close());

  const params = (step: string) => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 1024,
    messages: [{ role: 'user' as const, content: 'hi' }],
    [STEP_INPUTS_FIELD]:
      step === 'domain_expert'
        ? { question: 'hi', supportingInsights: '' }
        : { messages: [{ role: 'user', content: 'hi' }] },
  });

  test('a text stream is split as the call’s modelled length says, and joins back to the rule’s text', async () => {
    const stream = client.messages.stream(params('fallback_reply'), { headers: { 'x-amy-step': 'fallback_reply' } });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    // fallback_reply is modelled at 250 tokens: 125 deltas of 2 tokens, capped by the text's characters.
    expect(deltas).toHaveLength(Math.min(125, Array.from(TEXT).length));
    expect(deltas.join('')).toBe(TEXT);
    expect(final.usage.output_tokens).toBe(Math.ceil(TEXT.length / 4));
  });

  test('a tool call streams in pieces that parse back to its input; not streamed, the same message', async () => {
    const stream = client.messages.stream(params('domain_expert'), { headers: { 'x-amy-step': 'domain_expert' } });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: 'Checking.', citations: null },
      expect.objectContaining({ type: 'tool_use', name: 'range_compare', input: { marker: 'hrv', value: 42 } }),
    ]);
    const whole = await client.messages.create(params('domain_expert'), { headers: { 'x-amy-step': 'domain_expert' } });
    expect(whole.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
  });
});
