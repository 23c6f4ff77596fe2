-- CreateTable
CREATE TABLE "rate_limit_overrides" (
    "org_id" TEXT NOT NULL,
    "group" TEXT NOT NULL,
    "rate_per_minute" INTEGER NOT NULL,
    "burst" INTEGER NOT NULL,
    "scope" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_overrides_pkey" PRIMARY KEY ("org_id","group")
);

