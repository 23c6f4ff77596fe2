-- AlterTable
ALTER TABLE "refresh_tokens" ADD COLUMN     "device_id" TEXT,
ADD COLUMN     "ip" TEXT,
ADD COLUMN     "user_agent" TEXT;

