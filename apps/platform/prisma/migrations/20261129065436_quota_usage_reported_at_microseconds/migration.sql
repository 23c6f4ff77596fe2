-- AlterTable
ALTER TABLE "quota_usage" ALTER COLUMN "reported_at" SET DATA TYPE TIMESTAMPTZ(6);

