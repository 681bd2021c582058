/**
 * One turn = one workflow (workflowId = turn id). This code only sequences activities and branches
 * on their results; every side effect lives in activities/. It must stay deterministic: no I/O,
 * clocks, randomness or Node built-ins here (enforced by lint).
 */
import { ApplicationFailure, CancellationScope } from '@temporalio/workflow';
import { lastUserMessage } from '../contracts/last-user-message';
import {
  ROUTABLE_AGENTS,
  agentFromIdOrLabel,
  type AgentName,
  type Invocation,
  type RoutableAgent,
  type TurnPath,
} from '../contracts/steps';
import type { TurnResult } from '../contracts/turn';
import type { ValidatedFinding } from '../activities/steps/run-gates';
import { agentSteps, bookkeeping, bookkeepingSteps, modelSteps } from './activity-proxies';
import { finishTurn } from './finish-turn';
import { runDataScienceAgent, type DataScienceOutcome } from './data-science';
import { investigatorTurn } from './investigator';
import type { TurnWorkflowInput } from './definitions';
import { recallMemory, recallMemoryAtTurnStart } from './memory';
import { trackProgress, type StepRunner } from './progress';
import { validateFindings } from './validate-findings';
import { openInputDesk } from './ask-user';
import { scanConfirmed } from './investigator-confirmation';
import { askWhatItMeans, type ClarifiedConversation } from './clarification';
import { publicTurnError, turnError } from './turn-errors';

/** Returns the turn's result, so the Web UI shows the answer, its cost and the agents that ran. */
export async function TurnWorkflow(input: TurnWorkflowInput): Promise<TurnResult> {
  const { turnId, messages } = input;
  const step = trackProgress();
  // Set up for every turn, so an answer to a turn that never asked is refused; only `interaction` lets it ask.
  const desk = openInputDesk(turnId, input.interaction);
  // Which way the turn went, once it is known: its ending is counted by it (platform/metrics.ts).
  let path: TurnPath | undefined;
  try {
    await step('start_turn', () => bookkeepingSteps().startTurn({ turnId }));
    // Read once, before the first model call: every agent of the turn, the Critic and the extractor
    // included, is given this same snapshot (docs/design.md#injection).
    const memory = await recallMemoryAtTurnStart(step, input);
    // Side by side: whether the question needs asking back does not wait for how vague it is.
    const [{ vagueness }, ambiguity] = await Promise.all([
      step('classify_vagueness', () => modelSteps.classifyVagueness({ turnId, messages, memory })),
      desk.accepts('clarification') ? step('clarify', () => modelSteps.clarify({ turnId, messages, memory })) : null,
    ]);
    if (vagueness === 'high' && (await scanConfirmed(desk))) {
      path = 'investigator';
      return await investigatorTurn(step, input, memory);
    }
    const clarified = await askWhatItMeans(desk, messages, ambiguity);
    const conversation = clarified.messages;
    const routing = withAgentIds(
      await step('route', () => modelSteps.route({ turnId, messages: conversation, memory })),
    );
    path = routing.main_agent === '' ? 'conversation' : (routing.main_agent as RoutableAgent);
    if (routing.main_agent === '') {
      const { answer, factCheck } = await step('fallback_reply', () =>
        modelSteps.replyConversationally({ turnId, messages: conversation, memory }),
      );
      return await finishTurn(step, input, {
        answer,
        validated: [],
        memory,
        record: { factSheet: [], agentsUsed: [], factCheck, path: 'conversation' },
      });
    }
    return await specialistTurn(step, input, clarified, routing, memory);
  } catch (err) {
    const error = turnError(err);
    // Recording the failure must survive the cancellation that may have caused it.
    await CancellationScope.nonCancellable(() =>
      bookkeeping.failTurn({ turnId, error: publicTurnError(error), ...(path ? { path } : {}) }),
    );
    throw ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
  }
}

type Routing = Awaited<ReturnType<typeof modelSteps.route>>;
type AgentQuestions = Awaited<ReturnType<typeof modelSteps.rephraseQuestions>>;
type ExpertAnswer = Awaited<ReturnType<typeof agentSteps.consultDomainExpert>>;
type Coaching = Awaited<ReturnType<typeof agentSteps.coachUser>>;

/**
 * Routing and rephrase results name agents by id. Turns recorded before they did (test/histories, and
 * any turn in flight across the deploy that changed it) replay with the agents' labels ('Data Science
 * Agent') in those results, so the workflow reads either; anything else was never routable.
 */
function routableAgent(name: string): RoutableAgent | null {
  const agent = agentFromIdOrLabel(name);
  return ROUTABLE_AGENTS.find((routable) => routable === agent) ?? null;
}

function withAgentIds(routing: Routing): Routing {
  const main = routing.main_agent === '' ? null : routableAgent(routing.main_agent);
  if (main === null) return { ...routing, main_agent: '', supporting_agents: [] };
  const supporting = routing.supporting_agents.flatMap((name) => routableAgent(name) ?? []);
  return { ...routing, main_agent: main, supporting_agents: supporting };
}

function questionsWithAgentIds(questions: AgentQuestions): AgentQuestions {
  return Object.fromEntries(
    Object.entries(questions).map(([name, question]) => [routableAgent(name) ?? name, question]),
  );
}

/**
 * Every routed turn (docs/design.md#collaboration-patterns): rephrase → supporting agents in
 * parallel → the main agent (the coach after validating the supporting findings: the pre-validation
 * hop) → reflection when there were supporting agents → validation of whatever is not validated yet →
 * synthesis (+ fact-check) → memory.
 */
async function specialistTurn(
  step: StepRunner,
  input: TurnWorkflowInput,
  { messages, clarification }: ClarifiedConversation,
  routing: Routing,
  recalled: string | undefined,
): Promise<TurnResult> {
  const { turnId, userId } = input;
  const mainAgent = routing.main_agent as RoutableAgent;
  const supporting = routing.supporting_agents;
  // What the user asked: with a clarification, the answer to Amy's question is the conversation's last message.
  const userMessage = lastUserMessage(input.messages);
  const questions = questionsWithAgentIds(
    await step('rephrase', () => modelSteps.rephraseQuestions({ turnId, messages, routing, memory: recalled })),
  );
  // A turn started before memory was read at its start reads it here, as it did then.
  const memory = recalled ?? (await recallMemory(step, input));
  const questionFor = (agent: RoutableAgent) => questions[agent] ?? userMessage;
  const agentsUsed = new Set<AgentName>();
  const dataScienceRuns: DataScienceOutcome[] = [];
  const expertAnswers: string[] = [];

  const dataScience = async (question: string, invocation: Invocation) => {
    agentsUsed.add('data_science');
    const outcome = await runDataScienceAgent(step, {
      turnId,
      userId,
      question,
      invocation,
      // A reflection follow-up gets one shot; if it cannot answer at once, the ask was too big.
      maxDebugIterations: invocation === 'reflection' ? 0 : 2,
      idPrefix: invocation === 'reflection' ? 'dsr' : 'ds',
      memory,
    });
    dataScienceRuns.push(outcome);
    return outcome;
  };
  const domainExpert = async (
    question: string,
    invocation: Invocation,
    supportingInsights = '',
  ): Promise<ExpertAnswer> => {
    agentsUsed.add('domain_expert');
    const answer = await step('domain_expert', () =>
      agentSteps.consultDomainExpert({
        turnId,
        userId,
        question,
        invocation,
        supportingInsights,
        memory,
      }),
    );
    expertAnswers.push(answer.answer);
    return answer;
  };

  // Supporting agents run in parallel; the main agent sees all of their outputs in one block.
  const [dsSupport, deSupport] = await Promise.all([
    supporting.includes('data_science') ? dataScience(questionFor('data_science'), 'supporting') : null,
    supporting.includes('domain_expert') ? domainExpert(questionFor('domain_expert'), 'supporting') : null,
  ]);
  const supportingInsights = [
    dsSupport && `Data Science: ${dsSupport.status === 'ok' ? dsSupport.summary : 'the analysis did not complete.'}`,
    deSupport && `Domain Expert: ${deSupport.answer}`,
  ]
    .filter(Boolean)
    .join('\n\n');

  const validated: ValidatedFinding[] = [];
  const pending = [...(dsSupport?.findings ?? [])];
  let mainDraft = '';
  let coaching: Coaching | null = null;
  if (mainAgent === 'data_science') {
    const main = await dataScience(questionFor('data_science'), 'main');
    pending.push(...main.findings);
    mainDraft = main.status === 'ok' ? main.summary : '';
  } else if (mainAgent === 'domain_expert') {
    mainDraft = (await domainExpert(questionFor('domain_expert'), 'main', supportingInsights)).answer;
  } else {
    // The pre-validation hop: the coach turns numbers into actions, so it only sees validated ones.
    validated.push(
      ...(await step('pre_validation', () => validateFindings(step, { turnId, userId, memory }, pending.splice(0)))),
    );
    agentsUsed.add('health_coach');
    coaching = await step('health_coach', () =>
      agentSteps.coachUser({
        turnId,
        userId,
        messages,
        question: questionFor('health_coach'),
        findings: validated.filter((v) => v.verdict !== 'rejected').map(coachFinding),
        // Data Science reaches the coach only as validated findings: its summary was written before
        // validation and may quote a number the gates went on to reject.
        supportingInsights: deSupport ? `Domain Expert: ${deSupport.answer}` : '',
        memory,
      }),
    );
    mainDraft = coaching.reply;
  }

  const followUps: string[] = [];
  if (supporting.length > 0) {
    const reflection = await step('reflection', () =>
      modelSteps.reflect({ turnId, userMessage, mainDraft, supportingInsights, memory }),
    );
    const [dsFollowUp, deFollowUp] = await Promise.all([
      reflection.dataScience ? dataScience(reflection.dataScience, 'reflection') : null,
      reflection.domainExpert ? domainExpert(reflection.domainExpert, 'reflection') : null,
    ]);
    if (dsFollowUp) {
      pending.push(...dsFollowUp.findings);
      if (dsFollowUp.status === 'ok') followUps.push(`Data Science follow-up: ${dsFollowUp.summary}`);
    }
    if (deFollowUp) followUps.push(`Domain Expert follow-up: ${deFollowUp.answer}`);
  }

  // Every finding is validated exactly once: what the coach saw already was.
  validated.push(...(await step('validation', () => validateFindings(step, { turnId, userId, memory }, pending))));
  const synthesis = await step('synthesis', () =>
    modelSteps.synthesise({
      turnId,
      userMessage,
      mainAgent,
      mainAgentDraft: mainDraft,
      supportingInsights: [supportingInsights, ...followUps].filter(Boolean).join('\n\n'),
      expertProse: expertAnswers.join('\n\n'),
      findings: validated.map(({ finding, verdict, source, assessment, table }) => ({
        finding,
        verdict,
        source,
        assessment,
        ...(table ? { table } : {}),
      })),
      anchors: coaching?.anchors ?? [],
      // The warning applies when Data Science was asked and no run of it produced a result.
      dataScienceFailed: dataScienceRuns.length > 0 && dataScienceRuns.every((run) => run.status === 'failed'),
      ...(clarification ? { clarification } : {}),
      memory,
    }),
  );
  return await finishTurn(step, input, {
    answer: synthesis.answer,
    validated,
    memory,
    record: {
      factSheet: synthesis.factSheet,
      personalAnchors: synthesis.personalAnchors,
      agentsUsed: AGENT_ORDER.filter((agent) => agentsUsed.has(agent)),
      factCheck: synthesis.factCheck,
      path: mainAgent,
    },
  });
}

const AGENT_ORDER: AgentName[] = ['data_science', 'domain_expert', 'health_coach'];

const coachFinding = ({ finding, verdict, assessment }: ValidatedFinding) => ({
  finding,
  verdict,
  assessment: assessment && { mechanism: assessment.mechanism, strategy: assessment.strategy },
});
