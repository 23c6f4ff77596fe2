import { createHash } from 'node:crypto';

import { ArchivedContent } from './mail-sender';
import { MailKind, RenderedMail, renderMail } from './templates';

/** What stands for the one-time token in the archived copy of a mail. */
export const REDACTED_TOKEN = 'REDACTED';

/** The archived copy's header naming the token left out: its sha256 (hex), the hash identity keeps. */
export const REDACTED_TOKEN_HEADER = 'X-Redacted-Token-Sha256';

export const tokenDigest = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The mail to send, with the link that carries the one-time token, and the content to archive: the
 * same mail rendered with REDACTED_TOKEN in place of the token, so that no form of the token (link,
 * HTML attribute, any transfer encoding) can reach the archive; only its hash, in a header.
 */
export function renderWithArchivedCopy(
  kind: MailKind,
  locale: string,
  displayName: string,
  token: string,
  linkFor: (token: string) => string,
  linkLifetimeMs?: number,
): { mail: RenderedMail; archived: ArchivedContent } {
  return {
    mail: renderMail(kind, locale, displayName, linkFor(token), linkLifetimeMs),
    archived: {
      ...renderMail(kind, locale, displayName, linkFor(REDACTED_TOKEN), linkLifetimeMs),
      headers: { [REDACTED_TOKEN_HEADER]: tokenDigest(token) },
    },
  };
}
