import { createHash, randomBytes } from 'node:crypto';

/** Opaque: 256 random bits, base64url (43 characters). */
export const generateRefreshToken = () => randomBytes(32).toString('base64url');

/** SHA-256, hex: the token is high-entropy, so its hash reveals nothing and a fast hash suffices. */
export const hashRefreshToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Whether `value` can be a refresh token at all (43 base64url characters): garbage needs no lookup. */
export const isRefreshTokenShaped = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);
