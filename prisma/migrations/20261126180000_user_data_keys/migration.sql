-- One data key per user, wrapped by the master key: the key their turns' Temporal payloads are encrypted
-- under. It goes with its user, and a payload whose key is gone can never be decrypted again, wherever it is
-- kept (crypto-shredding). master_key_id says which master key wrapped it, for a rotation.
-- CreateTable
CREATE TABLE "user_data_keys" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "wrapped_key" BYTEA NOT NULL,
    "master_key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_data_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_data_keys_user_id_key" ON "user_data_keys"("user_id");

-- AddForeignKey
ALTER TABLE "user_data_keys" ADD CONSTRAINT "user_data_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
