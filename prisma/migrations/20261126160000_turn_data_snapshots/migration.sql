-- One snapshot of the user's health data per turn, taken by the turn's first activity that reads data:
-- every step of the turn computes over these rows, however the user's data changes while it runs, and
-- a retried turn keeps them. A snapshot goes with its turn (and so with its user), never before.
-- CreateTable
CREATE TABLE "turn_data_snapshots" (
    "turn_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "taken_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "daily" JSONB NOT NULL,
    "workouts" JSONB NOT NULL,
    "labs" JSONB NOT NULL,
    "profile" JSONB,
    "daily_rows" INTEGER NOT NULL,
    "workout_rows" INTEGER NOT NULL,
    "lab_rows" INTEGER NOT NULL,

    CONSTRAINT "turn_data_snapshots_pkey" PRIMARY KEY ("turn_id")
);

-- CreateIndex
CREATE INDEX "turn_data_snapshots_user_id_idx" ON "turn_data_snapshots"("user_id");

-- AddForeignKey
ALTER TABLE "turn_data_snapshots" ADD CONSTRAINT "turn_data_snapshots_turn_id_fkey" FOREIGN KEY ("turn_id") REFERENCES "turns"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "turn_data_snapshots" ADD CONSTRAINT "turn_data_snapshots_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
