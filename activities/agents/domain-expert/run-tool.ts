/**
 * The Domain Expert's tools, by name: the offline ones always, the network ones when AMY_DE_NETWORK_TOOLS is on
 * (./network-tools.ts). The dispatch turns every call into a tool_result.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { NetworkTools } from '../../../platform/literature/network-tools';
import { metrics } from '../../../platform/metrics';
import { ATTR_TURN_ID, failSpan, inSpan } from '../../../platform/spans';
import { literaturePriorsTool } from './literature-lookup';
import { populationStatisticTool, pubmedSearchTool } from './network-tools';
import { rangeCompareTool } from './range-compare';
import type { DomainExpertTool, ToolContext, ToolOutcome } from './tool-contract';
import { userProfileTool } from './user-profile';

/** The GenAI conventions' names for a tool call's span (copied, as platform/llm/tracing.ts explains). */
const GEN_AI_OPERATION = 'gen_ai.operation.name';
const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** How the call ended, as the metrics count it: `ok`, or its failure (`timeout`, `privacy_refused`, …). */
const ATTR_TOOL_OUTCOME = 'amy.tool.outcome';

const OFFLINE_TOOLS: readonly DomainExpertTool[] = [rangeCompareTool, literaturePriorsTool, userProfileTool];

/** The tools a consultation offers: with network tools, PubMed, and Data Commons when it has a key. */
function toolsFor(network: NetworkTools | undefined): readonly DomainExpertTool[] {
  if (!network) return OFFLINE_TOOLS;
  return [...OFFLINE_TOOLS, pubmedSearchTool, ...(network.dataCommons ? [populationStatisticTool] : [])];
}

export function domainExpertToolDefinitions(network: NetworkTools | undefined): Anthropic.Tool[] {
  return toolsFor(network).map((tool) => tool.definition);
}

/** Runs the named tool; a name the consultation does not offer is an error result, as invalid input is. */
export async function runDomainExpertTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const tools = toolsFor(ctx.network?.tools);
  const tool = tools.find((t) => t.definition.name === name);
  if (!tool) {
    metrics.domainExpertToolCall('unknown', 'unknown_tool');
    return {
      content: `unknown tool "${name}"; the tools are ${tools.map((t) => t.definition.name).join(', ')}`,
      isError: true,
    };
  }
  // A span per call says which tool, for which turn, how long and how it ended: never its input or its result.
  return inSpan(
    `execute_tool ${name}`,
    { attributes: { [GEN_AI_OPERATION]: 'execute_tool', [GEN_AI_TOOL_NAME]: name, [ATTR_TURN_ID]: ctx.turnId } },
    async (span) => {
      const outcome = await tool.run(input, ctx);
      const ending = outcome.isError ? (outcome.failure ?? 'error') : 'ok';
      metrics.domainExpertToolCall(name, ending);
      span.setAttribute(ATTR_TOOL_OUTCOME, ending);
      if (outcome.isError) failSpan(span, ending);
      return outcome;
    },
  );
}
