-- DropIndex
DROP INDEX "login_audit_org_id_at_idx";

-- CreateTable
CREATE TABLE "admin_audit" (
    "id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "org_id" TEXT NOT NULL,
    "actor_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "details" JSONB,

    CONSTRAINT "admin_audit_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "admin_audit_org_id_at_id_idx" ON "admin_audit"("org_id", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "login_audit_org_id_at_id_idx" ON "login_audit"("org_id", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "login_audit_org_id_subject_at_id_idx" ON "login_audit"("org_id", "subject", "at" DESC, "id" DESC);

