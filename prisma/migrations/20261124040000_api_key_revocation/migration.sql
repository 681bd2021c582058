-- A key stops working from its revoked_at on: now for a revocation, later for a rotation with a grace
-- period. Null while the key has not been revoked.
-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "revoked_at" TIMESTAMPTZ(3);
