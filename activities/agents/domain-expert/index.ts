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
import { withMemory } from '../../runtime/memory-injection';
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
import { WebReplyWatch, WebToolRefused, webToolDefinitions, webToolsWithdrawnNote } from './web-tools';

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

/**
 * The assistant turn as it is sent back: its text (with the citations the API attached) and tool calls, and the
 * server tools' calls and results as the API gave them, which it needs to see again to go on from them.
 */
function asParams(content: Anthropic.ContentBlock[]): Anthropic.ContentBlockParam[] {
  return content.flatMap((block): Anthropic.ContentBlockParam[] => {
    switch (block.type) {
      case 'text': {
        if (block.text === '') return [];
        const citations = block.citations ?? [];
        return [{ type: 'text', text: block.text, ...(citations.length > 0 ? { citations } : {}) }];
      }
      case 'tool_use':
        return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
      case 'server_tool_use':
        return [{ type: 'server_tool_use', id: block.id, name: block.name, input: block.input }];
      case 'web_search_tool_result':
        return [{ type: 'web_search_tool_result', tool_use_id: block.tool_use_id, content: block.content }];
      default:
        // Web fetch's result is a beta block the non-beta types do not name: sent back exactly as it came.
        return (block as { type: string }).type === 'web_fetch_tool_result'
          ? [block as unknown as Anthropic.ContentBlockParam]
          : [];
    }
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

  // The text of replies the API paused (`pause_turn`, a long server tool turn): the answer goes on from it.
  let paused = { text: '', urls: [] as string[] };
  let webTools = webToolDefinitions(network?.tools.web);

  for (let turn = 1; ; turn++) {
    // Every round of the loop is the same call: its tool results travel in the messages. The guard learns the
    // URLs the server tools return during the reply, into the consultation's set.
    const guard = new StreamingUrlGuard(toolUrls);
    const watch =
      network?.tools.web && webTools.length > 0
        ? new WebReplyWatch(guard, network.privacy, network.tools.web, toolUrls)
        : undefined;
    let response;
    try {
      response = await streamThoughts(deps, {
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
          tools: [...domainExpertToolDefinitions(deps.networkTools), ...webTools],
          maxTokens: MAX_TOKENS,
        },
        filter: guard,
        ...(watch ? { onEvent: watch.onEvent } : {}),
      });
    } catch (err) {
      if (!(err instanceof WebToolRefused) || !watch?.refusal) throw err;
      // The reply asked a server tool for something of the user's: it is dropped, and the round asked again
      // without web tools (the earlier rounds' conversation unchanged, the model told why).
      log.warn('domain expert web tool input refused; web tools withdrawn for this consultation', { turnId });
      webTools = [];
      withNote(messages, webToolsWithdrawnNote(watch.refusal));
      continue;
    }
    costUsd += response.costUsd;
    if (guard.removed.length > 0) {
      log.warn('domain expert text cited URLs no tool returned; removed them', {
        turnId,
        removed: guard.removed.length,
      });
    }
    if (response.message.stop_reason === 'pause_turn' && turn < MAX_MODEL_TURNS) {
      // The API paused a long server tool turn: sent back as it is, the reply goes on where it stopped.
      paused = { text: paused.text + response.narrated, urls: [...paused.urls, ...guard.kept] };
      messages.push({ role: 'assistant', content: asParams(response.message.content) });
      continue;
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
      const answer = paused.text + response.narrated;
      if (answer === '') {
        throw new ModelOutputInvalidError(`the domain expert gave no answer text after ${turn} model turn(s)`, {
          requestId: response.requestId,
        });
      }
      return { answer, costUsd, toolCalls, urls: [...new Set([...paused.urls, ...guard.kept])] };
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
    paused = { text: '', urls: [] };
    messages.push({ role: 'user', content: results });
  }
}

/** Adds a note for the model: to the conversation's last message when it is the user's (the prompt, tool results). */
function withNote(messages: Anthropic.MessageParam[], note: string): void {
  const last = messages.at(-1)!;
  if (last.role === 'assistant') {
    messages.push({ role: 'user', content: note });
    return;
  }
  const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  messages[messages.length - 1] = { ...last, content: [...content, { type: 'text', text: note }] };
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
