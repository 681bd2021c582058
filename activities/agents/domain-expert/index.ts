/**
 * The Domain Expert agent (docs/design.md#domain-expert), one activity: a tool-use loop of at most
 * ten model turns over offline tools (reference ranges, literature priors, the user's profile and
 * labs). As main agent after supporting agents (Step 4) it gets their insights to interpret, not redo.
 *
 * Each model turn's text is streamed as the agent's thoughts while the model writes it, then its tool
 * calls, one line each. Two guarantees do not rest on the prompt: the loop stops after ten model turns
 * whatever the model asks for, and no URL reaches the answer, or the thoughts, unless a tool of this
 * consultation returned it (the stream is guarded as it goes, so the last turn's thoughts are the answer).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { withMemory } from '../../steps/memory/prompt';
import { log } from '@temporalio/activity';
import {
  DOMAIN_EXPERT_LAST_ROUND,
  DOMAIN_EXPERT_SYSTEM,
  domainExpertUserPrompt,
  type DomainExpertPromptInputs,
} from './prompt';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt, type StepAttempt } from '../../runtime/step-attempt';
import { announceAgentCompleted, announceAgentStarted, streamThoughts } from '../../runtime/stream-agent-reply';
import type { ToolContext } from './tool-contract';
import { domainExpertToolDefinitions, runDomainExpertTool } from './run-tool';
import { readOutgoingPrivacy } from './outgoing-privacy';
import { StreamingUrlGuard, urlsIn } from './url-guard';

export interface ConsultDomainExpertInput {
  turnId: string;
  userId: string;
  /** The Domain Expert's rephrased question. */
  question: string;
  /** The agent's role in the turn: it names the agent's started/completed events, once per role. */
  invocation: 'main' | 'supporting' | 'reflection';
  /** As main agent: what the supporting agents found ('' otherwise). The agent interprets it, never recomputes it. */
  supportingInsights: string;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface ConsultDomainExpertOutput {
  answer: string;
  costUsd: number;
  toolCalls: number;
  /** The URLs kept in the answer, each one returned by a tool in this consultation. */
  urls: string[];
}

const STEP = 'domain_expert';
const AGENT = 'domain_expert';
/** The Domain Expert's ReAct loop runs at most ten model turns. */
const MAX_MODEL_TURNS = 10;
const MAX_TOKENS = 1500;

/** The assistant turn as it is sent back: its text and tool calls (the loop enables nothing else). */
function asParams(content: Anthropic.ContentBlock[]): Anthropic.ContentBlockParam[] {
  return content.flatMap((block): Anthropic.ContentBlockParam[] => {
    if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
    if (block.type === 'tool_use') return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    return [];
  });
}

/** `[range_compare ldl 124]`: the call as one line of narration. */
function describeCall(call: Anthropic.ToolUseBlock): string {
  const input = typeof call.input === 'object' && call.input !== null ? Object.values(call.input) : [];
  const args = input.filter((v) => ['string', 'number', 'boolean'].includes(typeof v)).map(String);
  return `[${[call.name, ...args].join(' ')}]\n`;
}

async function consult(
  deps: StepDeps,
  input: ConsultDomainExpertInput,
  { narration, signal }: StepAttempt,
): Promise<ConsultDomainExpertOutput> {
  const { turnId } = input;
  const inputs: DomainExpertPromptInputs = { question: input.question, supportingInsights: input.supportingInsights };
  // `include_biomarkers` needs nothing here: the turn's snapshot, which the tools read, holds no labs when it is false.
  // With network tools on, what their queries must not carry is read once, before the first call.
  const network = deps.networkTools
    ? {
        tools: deps.networkTools,
        privacy: await readOutgoingPrivacy(deps.pool, { turnId, userId: input.userId, memory: input.memory }),
      }
    : undefined;
  const toolCtx: ToolContext = {
    pool: deps.pool,
    turnId,
    userId: input.userId,
    now: deps.clock(),
    ...(network ? { network } : {}),
  };
  const think = (text: string) => narration.write(AGENT, text);

  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: domainExpertUserPrompt(inputs) }];
  const toolUrls = new Set<string>();
  let costUsd = 0;
  let toolCalls = 0;

  for (let turn = 1; ; turn++) {
    // Every round of the loop is the same call: its tool results travel in the messages.
    const guard = new StreamingUrlGuard(new Set(toolUrls));
    const response = await streamThoughts(deps, {
      turnId,
      modelCall: STEP,
      inputs,
      narration,
      signal,
      agent: AGENT,
      request: {
        model: deps.models.main,
        system: withMemory(DOMAIN_EXPERT_SYSTEM, input.memory),
        messages,
        tools: domainExpertToolDefinitions(deps.networkTools),
        maxTokens: MAX_TOKENS,
      },
      filter: guard,
    });
    costUsd += response.costUsd;
    if (guard.removed.length > 0) {
      log.warn('domain expert text cited URLs no tool returned; removed them', {
        turnId,
        removed: guard.removed.length,
      });
    }
    const calls = response.message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');

    if (calls.length === 0 || turn === MAX_MODEL_TURNS) {
      if (calls.length > 0) {
        log.warn('domain expert still asked for tools on its last model turn; answering with its text', {
          turnId,
          turns: turn,
          toolCalls,
        });
      }
      // What was streamed is the answer: guarded and trimmed as it went (an earlier attempt's part of it included).
      const answer = response.narrated;
      if (answer === '') {
        throw new ModelOutputInvalidError(`the domain expert gave no answer text after ${turn} model turn(s)`, {
          requestId: response.requestId,
        });
      }
      return { answer, costUsd, toolCalls, urls: guard.kept };
    }

    // The tool calls are narrated on lines of their own, after whatever the model said first.
    if (response.narrated !== '') await think('\n');
    messages.push({ role: 'assistant', content: asParams(response.message.content) });
    const results: Anthropic.ContentBlockParam[] = [];
    for (const call of calls) {
      await think(describeCall(call));
      const outcome = await runDomainExpertTool(call.name, call.input, toolCtx);
      toolCalls++;
      urlsIn(outcome.content).forEach((url) => toolUrls.add(url));
      results.push({
        type: 'tool_result',
        tool_use_id: call.id,
        content: outcome.content,
        ...(outcome.isError ? { is_error: true } : {}),
      });
    }
    if (turn + 1 === MAX_MODEL_TURNS) results.push({ type: 'text', text: DOMAIN_EXPERT_LAST_ROUND });
    messages.push({ role: 'user', content: results });
  }
}

export function createConsultDomainExpert(
  deps: StepDeps,
): (input: ConsultDomainExpertInput) => Promise<ConsultDomainExpertOutput> {
  return async function consultDomainExpert(input) {
    const { turnId, invocation } = input;
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, {
      turnId,
      agent: AGENT,
      invocation,
      question: input.question,
      at: startedAt,
    });
    const result = await runStepAttempt(deps.events, turnId, STEP, (attempt) => consult(deps, input, attempt));
    await announceAgentCompleted(deps.events, {
      turnId,
      agent: AGENT,
      invocation,
      startedAt,
      at: deps.clock(),
      costUsd: result.costUsd,
      output: result.answer,
    });
    return result;
  };
}
