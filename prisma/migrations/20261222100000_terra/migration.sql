-- Terra in (docs/terra.md): the events Terra delivers, kept sealed for replay, the providers each user connected,
-- what each provider's records say about a day or a workout, recombined by priority, large requests' backfills.
-- CreateTable
CREATE TABLE "terra_events" (
    "id" TEXT NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "terra_reference" TEXT,
    "terra_user_id" TEXT,
    "provider" TEXT,
    "reference_id" TEXT,
    "user_id" TEXT,
    "sealed_body" BYTEA NOT NULL,
    "master_key_id" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ordered_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "workflow_started_at" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL DEFAULT 'received',
    "applied_at" TIMESTAMPTZ(3),
    "outcome" JSONB,

    CONSTRAINT "terra_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "terra_connections" (
    "terra_user_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "scopes" TEXT,
    "last_event" TEXT NOT NULL,
    "state_at" TIMESTAMPTZ(3) NOT NULL,
    "connected_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "terra_connections_pkey" PRIMARY KEY ("terra_user_id")
);

-- CreateTable
CREATE TABLE "terra_contributions" (
    "user_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "date" DATE NOT NULL,
    "payload" JSONB NOT NULL,
    "event_ordered_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "terra_contributions_pkey" PRIMARY KEY ("user_id","provider","kind","key")
);

-- CreateTable
CREATE TABLE "terra_backfills" (
    "reference" TEXT NOT NULL,
    "user_id" TEXT,
    "terra_user_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "expected_payloads" INTEGER,
    "received_payloads" INTEGER NOT NULL DEFAULT 0,
    "first_day" DATE,
    "last_day" DATE,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "terra_backfills_pkey" PRIMARY KEY ("reference")
);

-- CreateIndex
CREATE UNIQUE INDEX "terra_events_dedupe_key_key" ON "terra_events"("dedupe_key");

-- CreateIndex
CREATE INDEX "terra_events_workflow_started_at_received_at_idx" ON "terra_events"("workflow_started_at", "received_at");

-- CreateIndex
CREATE INDEX "terra_events_user_id_received_at_idx" ON "terra_events"("user_id", "received_at");

-- CreateIndex
CREATE INDEX "terra_events_reference_id_idx" ON "terra_events"("reference_id");

-- CreateIndex
CREATE INDEX "terra_connections_user_id_idx" ON "terra_connections"("user_id");

-- CreateIndex
CREATE INDEX "terra_contributions_user_id_date_idx" ON "terra_contributions"("user_id", "date");

-- CreateIndex
CREATE INDEX "terra_backfills_user_id_idx" ON "terra_backfills"("user_id");

-- AddForeignKey
ALTER TABLE "terra_events" ADD CONSTRAINT "terra_events_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "terra_connections" ADD CONSTRAINT "terra_connections_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "terra_contributions" ADD CONSTRAINT "terra_contributions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "terra_backfills" ADD CONSTRAINT "terra_backfills_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
