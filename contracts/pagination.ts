/**
 * Cursor pagination as every list endpoint does it (docs/api.md#routes): `limit` 1–100
 * (default 20), an opaque `cursor` that is the previous page's `next_cursor`, and pages of
 * `{ data, next_cursor, has_more }`.
 */
import { z } from 'zod';

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 100;

export const pageLimitSchema = z.coerce
  .number()
  .int()
  .min(1)
  .max(PAGE_SIZE_MAX)
  .default(PAGE_SIZE_DEFAULT)
  .describe('Page size.');

export const pageCursorSchema = z
  .string()
  .min(1)
  .optional()
  .describe('The next_cursor of the previous page, with the same filters.');

export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable(),
    has_more: z.boolean(),
  });
