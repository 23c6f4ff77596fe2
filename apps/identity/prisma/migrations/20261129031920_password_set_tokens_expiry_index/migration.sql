-- CreateIndex
CREATE INDEX "password_set_tokens_expires_at_idx" ON "password_set_tokens"("expires_at");

