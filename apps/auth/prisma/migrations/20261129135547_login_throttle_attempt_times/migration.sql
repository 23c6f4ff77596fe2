-- AlterTable
ALTER TABLE "login_throttles" ADD COLUMN     "attempt_times" TIMESTAMPTZ(3)[] DEFAULT ARRAY[]::TIMESTAMPTZ(3)[];

