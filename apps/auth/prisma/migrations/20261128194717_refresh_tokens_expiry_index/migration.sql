-- CreateIndex
CREATE INDEX "refresh_tokens_expires_at_id_idx" ON "refresh_tokens"("expires_at", "id");

