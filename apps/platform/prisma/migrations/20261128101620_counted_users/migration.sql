-- CreateTable
CREATE TABLE "counted_users" (
    "user_id" TEXT NOT NULL,
    "org_id" TEXT NOT NULL,
    "created" BOOLEAN NOT NULL DEFAULT false,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "counted_users_pkey" PRIMARY KEY ("user_id")
);

