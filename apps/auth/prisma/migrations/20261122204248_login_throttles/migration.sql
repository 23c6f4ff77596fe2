-- CreateTable
CREATE TABLE "login_throttles" (
    "username" TEXT NOT NULL,
    "client_ip" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "window_started_at" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),

    CONSTRAINT "login_throttles_pkey" PRIMARY KEY ("username","client_ip")
);

