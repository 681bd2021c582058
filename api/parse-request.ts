import type { z } from 'zod';
import { ApiError } from './errors';

/**
 * Parses a request part with its zod contract. The first problem becomes `400 invalid_field`
 * naming the field by its JSON path (`messages[2].role`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  let parsed: z.ZodSafeParseResult<z.infer<S>>;
  try {
    parsed = schema.safeParse(value);
  } catch (err) {
    // JSON nested thousands deep overflows the stack of the recursive checks: a 400, never a 500.
    if (err instanceof RangeError) throw new ApiError('invalid_request', `${where}: nested too deeply.`, where);
    throw err;
  }
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const fieldOf = (path: PropertyKey[]) =>
    path.reduce<string>(
      (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
      '',
    );
  // An unknown field is named by its whole path (`rows[3].calories`), so a client finds it in a long body.
  const unknown = keys.map((key) => fieldOf([...issue.path, key]));
  const field = unknown[0] ?? fieldOf(issue.path);
  const message =
    issue.code === 'unrecognized_keys'
      ? `Unknown field${keys.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`
      : `${field || where}: ${issue.message}.`;
  throw new ApiError('invalid_field', message, field || where);
}
