-- DELETE /v1/account keeps one record per deleted account: when, and how many rows of each kind were erased.
-- CreateTable
CREATE TABLE "account_deletions" (
    "id" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL,
    "erased" JSONB NOT NULL,

    CONSTRAINT "account_deletions_pkey" PRIMARY KEY ("id")
);
