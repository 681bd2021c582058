import type { z } from 'zod';

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small fetch wrapper for API tests: JSON in, JSON out, bearer key. */
export async function api<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Asserts a response body matches its contract schema, with the zod issues in the failure message. */
export function expectSchema<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`response does not match its schema: ${parsed.error.message}\n${JSON.stringify(value)}`);
  return parsed.data;
}

export const thanks = { messages: [{ role: 'user', content: 'thanks!' }] };
