/** RFC 6750 §2.1: `"Bearer" 1*SP b64token`; the scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;

/** The token of an `Authorization: Bearer …` value, or undefined for anything else. */
export function bearerToken(header: unknown): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}
