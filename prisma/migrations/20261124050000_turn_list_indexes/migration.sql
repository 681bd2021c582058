-- GET /v1/turns pages a user's turns newest first, (created_at, id) descending: with this index a page
-- is an index range scan however many turns the user has kept (turns are kept forever).
-- CreateIndex
CREATE INDEX "turns_user_id_created_at_id_idx" ON "turns"("user_id", "created_at" DESC, "id" DESC);

-- The reconciler of abandoned turns, every 15 minutes, looks for turns still queued or running and
-- created before a cutoff: a few rows among all the turns ever kept.
-- CreateIndex
CREATE INDEX "turns_status_created_at_idx" ON "turns"("status", "created_at");
