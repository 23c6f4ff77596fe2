-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "org_plans" (
    "org_id" TEXT NOT NULL,
    "plan" TEXT NOT NULL DEFAULT 'standard',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "org_plans_pkey" PRIMARY KEY ("org_id")
);

