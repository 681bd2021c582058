import type { z } from 'zod';
import { ApiError } from './errors';

const fieldOf = (path: PropertyKey[]) =>
  path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  );

/**
 * The path of the first own `__proto__` key in a parsed body or query, or null. zod leaves such a key out of what
 * it parses (assigned, it would set the parsed object's prototype), so a memory's `meta` would be stored without
 * it, silently; it is refused instead, wherever it is. A loop with parent links, not recursion: a body may be
 * nested as deep as its size allows.
 */
function prototypeKeyPath(value: unknown): PropertyKey[] | null {
  interface Node {
    value: unknown;
    key: PropertyKey;
    parent: Node | null;
  }
  const pending: Node[] = [{ value, key: '', parent: null }];
  for (let node = pending.pop(); node; node = pending.pop()) {
    const at = node.value;
    if (typeof at !== 'object' || at === null) continue;
    if (!Array.isArray(at) && Object.hasOwn(at, '__proto__')) {
      const path: PropertyKey[] = ['__proto__'];
      for (let step: Node | null = node; step?.parent; step = step.parent) path.push(step.key);
      return path.reverse();
    }
    for (const [key, inner] of Object.entries(at)) {
      pending.push({ value: inner, key: Array.isArray(at) ? Number(key) : key, parent: node });
    }
  }
  return null;
}

/**
 * Parses a request part with its zod contract. The first problem becomes `400 invalid_field`
 * naming the field by its JSON path (`messages[2].role`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const prototypeKey = prototypeKeyPath(value);
  if (prototypeKey) {
    const field = fieldOf(prototypeKey);
    throw new ApiError('invalid_field', `${field}: no key may be named __proto__.`, field);
  }
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
  // An unknown field is named by its whole path (`rows[3].calories`), so a client finds it in a long body.
  const unknown = keys.map((key) => fieldOf([...issue.path, key]));
  const field = unknown[0] ?? fieldOf(issue.path);
  const message =
    issue.code === 'unrecognized_keys'
      ? `Unknown field${keys.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`
      : `${field || where}: ${issue.message}.`;
  throw new ApiError('invalid_field', message, field || where);
}
