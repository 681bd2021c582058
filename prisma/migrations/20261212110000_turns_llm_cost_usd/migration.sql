-- The turn's running total of its model calls, kept by the ledger's insert (platform/llm/index.ts) in the
-- same statement, so that the cost warning needs no second statement to add the ledger up. The ledger
-- (llm_calls) stays the record, this is its sum per turn, backfilled here for the turns that exist.
ALTER TABLE "turns" ADD COLUMN "llm_cost_usd" DECIMAL(12,6) NOT NULL DEFAULT 0;
UPDATE "turns" t SET "llm_cost_usd" = s.total
  FROM (SELECT turn_id, SUM(cost_usd) AS total FROM "llm_calls" GROUP BY turn_id) s
 WHERE s.turn_id = t.id;
