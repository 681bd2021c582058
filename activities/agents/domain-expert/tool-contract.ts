/**
 * One Domain Expert tool: a name, a zod input schema (sent to the model as its JSON Schema, so the two
 * cannot drift) and a function returning JSON. Whatever the model asks for, a call ends in a
 * tool_result: input the schema refuses, or a request the data cannot answer, comes back as an error
 * result the model can read and correct. Infrastructure failures (the database) still throw, so the
 * activity is retried.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { NetworkTools } from '../../../platform/literature/network-tools';
import type { OutgoingPrivacy } from './outgoing-privacy';

export interface ToolContext {
  pool: Pool;
  /** The turn whose snapshot of the user's data the tools read (platform/health-data/snapshot.ts). */
  turnId: string;
  userId: string;
  now: Date;
  /** The network tools and what their queries must not carry; absent when AMY_DE_NETWORK_TOOLS is off. */
  network?: { tools: NetworkTools; privacy: OutgoingPrivacy };
}

export interface ToolOutcome {
  /** JSON on success, a sentence on error. */
  content: string;
  isError: boolean;
  /** Why an error result is one, as the metrics count it (never the query): `invalid_input`, `refused`, … */
  failure?: string;
}

/** A request the tool understood but cannot answer from its data; the model sees the message. */
export class ToolRequestError extends Error {
  override name = 'ToolRequestError';
  constructor(
    message: string,
    /** The kind of failure, for the metrics: `refused` (the data cannot answer it) unless a tool says more. */
    readonly failure = 'refused',
  ) {
    super(message);
  }
}

export interface DomainExpertTool {
  definition: Anthropic.Tool;
  run(input: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

const issuesText = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');

export function defineTool<S extends z.ZodType<Record<string, unknown>>>(spec: {
  name: string;
  description: string;
  input: S;
  run(input: z.output<S>, ctx: ToolContext): unknown;
}): DomainExpertTool {
  // The Messages API takes the schema itself; the `$schema` dialect marker is not part of it.
  const inputSchema: Record<string, unknown> = { ...z.toJSONSchema(spec.input) };
  delete inputSchema.$schema;
  return {
    definition: {
      name: spec.name,
      description: spec.description,
      input_schema: inputSchema as Anthropic.Tool.InputSchema,
    },
    async run(input, ctx) {
      const parsed = spec.input.safeParse(input);
      if (!parsed.success) {
        return {
          content: `invalid input for ${spec.name}: ${issuesText(parsed.error)}`,
          isError: true,
          failure: 'invalid_input',
        };
      }
      try {
        return { content: JSON.stringify(await spec.run(parsed.data, ctx)), isError: false };
      } catch (err) {
        if (err instanceof ToolRequestError) return { content: err.message, isError: true, failure: err.failure };
        throw err;
      }
    },
  };
}
