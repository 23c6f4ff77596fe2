-- CreateTable
CREATE TABLE "quota_overrides" (
    "org_id" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "limit" DOUBLE PRECISION NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "quota_overrides_pkey" PRIMARY KEY ("org_id","dimension","name")
);

-- CreateTable
CREATE TABLE "quota_usage" (
    "org_id" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "used" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "reported_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "quota_usage_pkey" PRIMARY KEY ("org_id","dimension","name")
);

-- CreateTable
CREATE TABLE "processed_events" (
    "event_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_events_pkey" PRIMARY KEY ("event_id")
);

