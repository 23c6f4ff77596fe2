/** Who is calling: the verified claims of an access token. */
export interface Caller {
  /** The user id, or the client id for a client_credentials token. */
  subject: string;
  kind: 'user' | 'client';
  orgId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  /** Roles the token was issued with (for clients: the client's roles). */
  roles: readonly string[];
  /** The token's `jti`: per-token rate limits key on it. */
  tokenId: string;
  expiresAt: number;
}

export const hasScope = (caller: Caller, scope: string) => caller.scopes.has(scope);
