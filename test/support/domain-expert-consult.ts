/**
 * For the Domain Expert's step tests with network tools: a PubMed client on the E-utilities stand-in (no waiting on
 * the rate limit, an in-memory cache), and one consultation as the main agent of a new turn of the harness.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createConsultDomainExpert,
  type ConsultDomainExpertInput,
  type ConsultDomainExpertOutput,
} from '../../activities/agents/domain-expert';
import type { NetworkTools } from '../../platform/literature/network-tools';
import { createMemoryToolResultCache } from '../../platform/literature/cache';
import { createCircuitBreaker } from '../../platform/literature/circuit';
import { createPubMedClient, type PubMedClient } from '../../platform/literature/pubmed';
import { createMemoryRateLimiter } from '../../platform/literature/rate-limit';
import type { StepHarness } from './step-harness';

export function standInPubMed(eutilsUrl: string): PubMedClient {
  return createPubMedClient({
    baseUrl: `${eutilsUrl}/entrez/eutils`,
    tool: 'amy-turn-service',
    email: 'ops@amy.example',
    limiter: createMemoryRateLimiter({ sleep: () => Promise.resolve() }),
    cache: createMemoryToolResultCache(),
    circuit: createCircuitBreaker({ failureThreshold: 5, coolDownMs: 60_000 }),
    timeoutMs: 2000,
  });
}

export async function consultWithNetworkTools(
  harness: StepHarness,
  tools: NetworkTools,
  question: string,
  memory: string,
): Promise<ConsultDomainExpertOutput & { turnId: string }> {
  const turnId = await harness.newTurn();
  const { rows } = await harness.deps.pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [
    turnId,
  ]);
  const input: ConsultDomainExpertInput = {
    turnId,
    userId: rows[0].user_id,
    question,
    invocation: 'main',
    supportingInsights: '',
    memory,
  };
  const result = (await new MockActivityEnvironment().run(
    createConsultDomainExpert({ ...harness.deps, networkTools: tools }),
    input,
  )) as ConsultDomainExpertOutput;
  return { ...result, turnId };
}
