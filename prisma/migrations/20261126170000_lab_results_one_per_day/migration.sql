-- POST /v1/data/labs upserts lab results by biomarker and day: the same biomarker on the same day again
-- replaces the value stored, so a user has one value per biomarker and day. Rows already stored twice
-- for a day (none the service writes, but a database may hold them) keep the later one, whose id (a
-- ULID) sorts last, before the index that forbids them is built.
DELETE FROM "lab_biomarkers" AS earlier
USING "lab_biomarkers" AS later
WHERE earlier."user_id" = later."user_id" AND earlier."name" = later."name"
  AND earlier."taken_on" = later."taken_on" AND earlier."id" < later."id";

-- DropIndex
DROP INDEX "lab_biomarkers_user_id_name_taken_on_idx";

-- CreateIndex
CREATE UNIQUE INDEX "lab_biomarkers_user_id_name_taken_on_key" ON "lab_biomarkers"("user_id", "name", "taken_on");
