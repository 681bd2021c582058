-- Whether the turn said `context.include_biomarkers: false` when its snapshot was taken: the user's lab results
-- were then left out of it (platform/health-data/snapshot.ts), so `lab_rows` is 0 because they were withheld,
-- not because there are none. Snapshots taken before this column copied the labs whatever the turn said.
ALTER TABLE "turn_data_snapshots" ADD COLUMN "labs_withheld" BOOLEAN NOT NULL DEFAULT false;
