-- CreateIndex
CREATE INDEX "known_login_sources_last_seen_at_idx" ON "known_login_sources"("last_seen_at");

