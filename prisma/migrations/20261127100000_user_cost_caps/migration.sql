-- Per-user cost caps (platform/cost-caps.ts): an operator's cap per user and window. Without a row, the default applies.
-- A user's spend in a window adds up their turns' llm_calls since the window's start: (turn_id, created_at)
-- serves that sum and every lookup by turn_id the old index served.

-- DropIndex
DROP INDEX "llm_calls_turn_id_idx";

-- CreateTable
CREATE TABLE "user_cost_caps" (
    "user_id" TEXT NOT NULL,
    "cap_window" TEXT NOT NULL,
    "limit_usd" DECIMAL(12,6),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_cost_caps_pkey" PRIMARY KEY ("user_id","cap_window"),
    CONSTRAINT "user_cost_caps_window_check" CHECK ("cap_window" IN ('daily', 'monthly')),
    CONSTRAINT "user_cost_caps_limit_check" CHECK ("limit_usd" >= 0)
);

-- CreateIndex
CREATE INDEX "llm_calls_turn_id_created_at_idx" ON "llm_calls"("turn_id", "created_at");

-- AddForeignKey
ALTER TABLE "user_cost_caps" ADD CONSTRAINT "user_cost_caps_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
