-- CreateTable
CREATE TABLE "mfa_totp" (
    "user_id" UUID NOT NULL,
    "secret" TEXT NOT NULL,
    "confirmed_at" TIMESTAMPTZ(3),
    "last_used_step" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mfa_totp_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "login_account_throttles" (
    "username" TEXT NOT NULL,
    "failures" INTEGER NOT NULL,
    "window_started_at" TIMESTAMPTZ(3) NOT NULL,
    "refused" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "login_account_throttles_pkey" PRIMARY KEY ("username")
);

-- CreateTable
CREATE TABLE "known_login_sources" (
    "username" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "known_login_sources_pkey" PRIMARY KEY ("username","kind","value")
);

