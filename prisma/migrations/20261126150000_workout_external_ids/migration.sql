-- Clients send workouts under their own ids, and POST /v1/data/workouts upserts by them: the same
-- external id twice is one workout. The workouts already stored (the demo's generated ones) take their
-- own id as external id, so every row has one before the column becomes required.
-- AlterTable
ALTER TABLE "workouts" ADD COLUMN "external_id" TEXT,
ADD COLUMN "distance_km" DOUBLE PRECISION;

UPDATE "workouts" SET "external_id" = "id";

ALTER TABLE "workouts" ALTER COLUMN "external_id" SET NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "workouts_user_id_external_id_key" ON "workouts"("user_id", "external_id");
