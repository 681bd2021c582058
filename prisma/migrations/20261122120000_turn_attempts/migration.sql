-- A failed turn can be retried (npm run turn:retry, or a reset in the Temporal Web UI). The retry is a
-- new attempt of the same turn: the earlier attempts' errors are kept, not overwritten.
ALTER TABLE "turns" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "turns" ADD COLUMN "previous_attempts" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "turns" ADD COLUMN "run_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
