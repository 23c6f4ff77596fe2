-- DropIndex
DROP INDEX "users_org_id_idx";

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "phone" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "users_phone_key" ON "users"("phone");

-- CreateIndex
CREATE INDEX "users_org_id_created_at_id_idx" ON "users"("org_id", "created_at" DESC, "id" DESC);

