-- The question a turn is waiting on (contracts/interaction.ts, InputRequest), null when it waits on none.
ALTER TABLE "turns" ADD COLUMN "pending_input" JSONB;
