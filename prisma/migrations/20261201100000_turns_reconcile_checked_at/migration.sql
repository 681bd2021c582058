-- The reconciler of abandoned turns takes the open turns it looked at least recently, so old turns it cannot
-- resolve never keep it from newer ones.
-- AlterTable
ALTER TABLE "turns" ADD COLUMN     "reconcile_checked_at" TIMESTAMPTZ(3);
