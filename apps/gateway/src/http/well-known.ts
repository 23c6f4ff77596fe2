/** RFC 8414 §3's well-known path of authorization server metadata. */
export const DISCOVERY_PATH = '/.well-known/oauth-authorization-server';

/** The issuer without its final slashes: what the gateway's public URLs are written after. */
export const issuerBase = (issuer: string): string => issuer.replace(/\/+$/, '');

/**
 * The issuer's path, which a proxy's prefix puts before every path of the gateway (`/accounts` for
 * `https://example.com/accounts`); empty for an issuer at the host's root.
 */
export const issuerPath = (issuer: string): string => new URL(issuerBase(issuer)).pathname.replace(/\/$/, '');

/**
 * Where a client looks for the metadata of `issuer` (RFC 8414 §3.1): the well-known path inserted
 * between the issuer's host and its path, so an issuer with a path (a gateway behind a proxy's
 * prefix, `https://example.com/accounts`) has its metadata at
 * `/.well-known/oauth-authorization-server/accounts`; the bare well-known path is served too.
 */
export function discoveryPaths(issuer: string): string[] {
  const path = issuerPath(issuer);
  return path ? [DISCOVERY_PATH, `${DISCOVERY_PATH}${path}`] : [DISCOVERY_PATH];
}
