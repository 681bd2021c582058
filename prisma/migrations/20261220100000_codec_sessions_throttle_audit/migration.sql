-- The codec server on a listener of its own (docs/operations.md#the-codec-server): sign-in sessions whose ids
-- are stored hashed, wrong tokens counted for the sign-in throttle, and an audit row per decode.
-- CreateTable
CREATE TABLE "codec_sessions" (
    "id_hash" TEXT NOT NULL,
    "operator" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "codec_sessions_pkey" PRIMARY KEY ("id_hash")
);

-- CreateTable
CREATE TABLE "codec_sign_in_failures" (
    "id" BIGSERIAL NOT NULL,
    "client_address" TEXT NOT NULL,
    "failed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "codec_sign_in_failures_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "codec_decode_audit" (
    "id" BIGSERIAL NOT NULL,
    "decoded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "operator" TEXT NOT NULL,
    "client_address" TEXT NOT NULL,
    "namespace" TEXT,
    "workflow_id" TEXT,
    "payloads" INTEGER NOT NULL,
    "key_ids" TEXT[],
    "user_ids" TEXT[],

    CONSTRAINT "codec_decode_audit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "codec_sessions_expires_at_idx" ON "codec_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "codec_sign_in_failures_failed_at_idx" ON "codec_sign_in_failures"("failed_at");

-- CreateIndex
CREATE INDEX "codec_sign_in_failures_client_address_failed_at_idx" ON "codec_sign_in_failures"("client_address", "failed_at");

-- CreateIndex
CREATE INDEX "codec_decode_audit_decoded_at_idx" ON "codec_decode_audit"("decoded_at");

