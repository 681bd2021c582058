/** The Domain Expert's offline tools, by name, and the dispatch that turns every call into a tool_result. */
import type Anthropic from '@anthropic-ai/sdk';
import { literaturePriorsTool } from './literature-lookup';
import { rangeCompareTool } from './range-compare';
import type { DomainExpertTool, ToolContext, ToolOutcome } from './tool-contract';
import { userProfileTool } from './user-profile';

const TOOLS: readonly DomainExpertTool[] = [rangeCompareTool, literaturePriorsTool, userProfileTool];
const BY_NAME = new Map(TOOLS.map((tool) => [tool.definition.name, tool]));

export const DOMAIN_EXPERT_TOOL_DEFINITIONS: Anthropic.Tool[] = TOOLS.map((tool) => tool.definition);

/** Runs the named tool; a name the agent does not have is an error result, as invalid input is. */
export function runDomainExpertTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = BY_NAME.get(name);
  if (!tool) {
    return Promise.resolve({
      content: `unknown tool "${name}"; the tools are ${[...BY_NAME.keys()].join(', ')}`,
      isError: true,
    });
  }
  return tool.run(input, ctx);
}
