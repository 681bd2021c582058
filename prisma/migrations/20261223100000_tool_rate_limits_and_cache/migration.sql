-- The Domain Expert's network tools (platform/literature/): request pacing per outside host shared by every
-- worker of a deployment, and results kept for a while so the same question costs no second request.
-- CreateTable
CREATE TABLE "tool_rate_slots" (
    "host" TEXT NOT NULL,
    "next_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tool_rate_slots_pkey" PRIMARY KEY ("host")
);

-- CreateTable
CREATE TABLE "tool_result_cache" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tool_result_cache_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "tool_result_cache_expires_at_idx" ON "tool_result_cache"("expires_at");
