import { simpleParser } from 'mailparser';

/** How long a piece of a secret must be to count as a trace of it. */
const PIECE = 12;

const decodeEntities = (html: string) =>
  html
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);?/g, (_, decimal: string) => String.fromCodePoint(Number(decimal)))
    .replace(
      /&(amp|lt|gt|quot|apos);/g,
      (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name]!,
    );

const escapeEveryEntity = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Where a secret shows in a raw e-mail, in any form that could carry it: as is, percent-encoded (a
 * link), HTML-escaped (an attribute), in the raw bytes, with quoted-printable soft line breaks undone
 * or decoded, in the decoded text and HTML parts (base64 included) and headers, and with HTML entities
 * decoded. Any piece of 12 characters of such a form counts. Answers the places found, empty if none.
 */
export async function secretTracesIn(raw: Buffer | string, secret: string): Promise<string[]> {
  const text = raw.toString();
  const parsed = await simpleParser(raw);
  const unfolded = text.replace(/=\r?\n/g, '');
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  const views: Record<string, string> = {
    raw: text,
    'quoted-printable unfolded': unfolded,
    'quoted-printable decoded': unfolded.replace(/=([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    ),
    'text part': parsed.text ?? '',
    'html part': html,
    'html part, entities decoded': decodeEntities(html),
    headers: parsed.headerLines.map((line) => line.line).join('\n'),
  };
  const forms = [...new Set([secret, encodeURIComponent(secret), escapeEveryEntity(secret)])];
  const found: string[] = [];
  for (const form of forms) {
    const length = Math.min(PIECE, form.length);
    const pieces = Array.from({ length: form.length - length + 1 }, (_, index) => form.slice(index, index + length));
    for (const [view, content] of Object.entries(views)) {
      const piece = pieces.find((candidate) => content.includes(candidate));
      if (piece) found.push(`${view}: "${piece}" of ${JSON.stringify(form)}`);
    }
  }
  return found;
}
