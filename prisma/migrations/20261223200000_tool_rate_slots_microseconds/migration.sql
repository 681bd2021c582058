-- A slot start is computed to the microsecond from the database clock. A column rounded to the millisecond
-- could move the first slot of a new host up to half a millisecond into the future, and its first caller would
-- wait for nothing. Microseconds keep the arithmetic exact for whole-millisecond intervals.
ALTER TABLE "tool_rate_slots" ALTER COLUMN "next_at" TYPE TIMESTAMPTZ(6);
