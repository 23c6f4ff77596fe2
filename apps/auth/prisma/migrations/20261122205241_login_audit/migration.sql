-- CreateTable
CREATE TABLE "login_audit" (
    "id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "grant_type" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "subject" TEXT,
    "org_id" TEXT,
    "client_id" TEXT NOT NULL,
    "client_ip" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "user_agent" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "reason" TEXT NOT NULL,

    CONSTRAINT "login_audit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "login_audit_org_id_at_idx" ON "login_audit"("org_id", "at");

