import { randomUUID } from 'node:crypto';

import { isRole, Role, ROLE_DEFAULT_SCOPES, ROLES, scopesOfRoles } from '@acct/access-token';
import { DomainError, FieldError, hasControlCharacter, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { OAuthErrors } from '../oauth/oauth-errors';
import { ClientRepository, ClientSummary, ClientType, OAuthClient } from './client.repository';
import { generateClientSecret, hashClientSecret, secretMatches } from './client-secret';
import { redirectUriProblem } from './redirect-uri';

/** Every scope a client may be registered for: those some role has. */
export const KNOWN_SCOPES: readonly string[] = scopesOfRoles(ROLES);

export const CLIENT_CREDENTIALS = 'client_credentials';
export const AUTHORIZATION_CODE = 'authorization_code';
export const REFRESH_TOKEN = 'refresh_token';
export const PASSWORD = 'password';
/** The grant types a client may be registered for (contract §6). */
export const GRANT_TYPES: readonly string[] = [AUTHORIZATION_CODE, REFRESH_TOKEN, CLIENT_CREDENTIALS, PASSWORD];
const CLIENT_TYPES: readonly string[] = ['confidential', 'public'];
const MAX_REDIRECT_URIS = 20;

export interface ClientCredentials {
  clientId: string;
  /** Shown once, when created or rotated; only its hash is kept. */
  clientSecret: string;
}

export interface NewClientRequest {
  orgId: string;
  name: string;
  scopes: readonly string[];
  /** Empty: the least powerful role whose defaults cover `scopes`. */
  roles?: readonly string[];
  /** Default: confidential. */
  type?: string;
  /** Default: client_credentials. */
  grantTypes?: readonly string[];
  redirectUris?: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** OAuth clients (contract §6): registration, the org's bootstrap client, authentication. */
@Injectable()
export class ClientService {
  constructor(private readonly clients: ClientRepository) {}

  /**
   * The confidential client whose id and secret these are, or undefined: an unknown id, a public
   * client and a wrong secret fail alike, after the same constant-time comparison.
   */
  async authenticate(clientId: string, clientSecret: string): Promise<OAuthClient | undefined> {
    const client = await this.clients.findForAuthentication(clientId);
    return secretMatches(clientSecret, client?.secretHash ?? undefined) && client ? client : undefined;
  }

  /**
   * The client a token request names, authenticated as its type requires (RFC 6749 §2.3): a
   * confidential client by its secret, a public one by its id alone (sending a secret is refused, so
   * nobody can believe one protects it). Then it must be registered for `grantType`.
   * `invalid_client` (401) for an unknown client or wrong secret, `unauthorized_client` otherwise.
   */
  async authenticateForGrant(clientId: string, clientSecret: string, grantType: string): Promise<OAuthClient> {
    const client = await this.clients.findForAuthentication(clientId);
    const authenticated =
      client?.type === 'public'
        ? clientSecret.length === 0
        : secretMatches(clientSecret, client?.secretHash ?? undefined) && client !== null;
    if (!client || !authenticated) throw OAuthErrors.invalidClient();
    if (!client.grantTypes.includes(grantType)) throw OAuthErrors.unauthorizedClient(grantType);
    return client;
  }

  /**
   * A client by id, for the authorization, revocation and introspection endpoints; undefined when
   * unknown. An id holding a control character names no client (and Postgres refuses U+0000 in text):
   * the HTTP Basic user reaches here undecided by the gateway's control-character check.
   */
  async find(clientId: string): Promise<OAuthClient | undefined> {
    if (!mayNameClient(clientId)) return undefined;
    return (await this.clients.findForAuthentication(clientId)) ?? undefined;
  }

  /** Registers a client in `orgId`; a public client gets no secret (`clientSecret: null`). */
  async create(request: NewClientRequest & { type?: 'confidential' }): Promise<ClientCredentials>;
  async create(request: NewClientRequest): Promise<{ clientId: string; clientSecret: string | null }>;
  async create(request: NewClientRequest): Promise<{ clientId: string; clientSecret: string | null }> {
    const client = validateNewClient(request);
    const clientSecret = client.type === 'confidential' ? generateClientSecret() : null;
    const clientId = randomUUID();
    await this.clients.create({
      ...client,
      id: clientId,
      secretHash: clientSecret === null ? null : hashClientSecret(clientSecret),
    });
    return { clientId, clientSecret };
  }

  /** The org's clients, without their secrets' hashes. */
  async list(orgId: string): Promise<ClientSummary[]> {
    if (!UUID.test(orgId)) throw validationFailed([{ field: 'org_id', message: 'must be a UUID' }]);
    return this.clients.list(orgId.toLowerCase());
  }

  /** A new secret for a confidential client; the old one stops working at once. */
  async rotateSecret(clientId: string): Promise<ClientCredentials> {
    const client = mayNameClient(clientId) ? await this.clients.findFresh(clientId) : undefined;
    if (!client) throw noClient(clientId);
    if (client.type === 'public') {
      throw validationFailed([{ field: 'client_id', message: 'is a public client, which has no secret' }]);
    }
    const clientSecret = generateClientSecret();
    // Deleted since it was read: as unknown as if the deletion had come first.
    if (!(await this.clients.replaceSecret(client.orgId, client.id, hashClientSecret(clientSecret)))) {
      throw noClient(clientId);
    }
    return { clientId: client.id, clientSecret };
  }

  /**
   * Deletes a client: from then on it cannot authenticate, and its refresh tokens are refused (the
   * refresh grant looks the client up); access tokens already issued live out their 2 hours.
   */
  async delete(clientId: string): Promise<void> {
    if (!mayNameClient(clientId) || !(await this.clients.delete(clientId))) throw noClient(clientId);
  }

  /**
   * The org's bootstrap client (contract §0): client_credentials, role admin, the admin scope set.
   * Idempotent: always the same client; a secret only when it is created or `rotateSecret` is set.
   */
  async ensureBootstrap(
    orgId: string,
    rotateSecret = false,
  ): Promise<{ clientId: string; clientSecret: string | null }> {
    if (!UUID.test(orgId)) throw validationFailed([{ field: 'org_id', message: 'must be a UUID' }]);
    const orgIdLower = orgId.toLowerCase();
    const clientSecret = generateClientSecret();
    const created = await this.clients.createBootstrapIfAbsent({
      id: randomUUID(),
      orgId: orgIdLower,
      name: 'bootstrap',
      type: 'confidential',
      secretHash: hashClientSecret(clientSecret),
      grantTypes: [CLIENT_CREDENTIALS],
      redirectUris: [],
      scopes: [...ROLE_DEFAULT_SCOPES.admin],
      roles: ['admin'],
    });
    const client = await this.clients.findBootstrap(orgIdLower);
    if (!client) throw new Error(`the bootstrap client of org ${orgIdLower} vanished`);
    if (created) return { clientId: client.id, clientSecret };
    if (!rotateSecret) return { clientId: client.id, clientSecret: null };
    if (!(await this.clients.replaceSecret(orgIdLower, client.id, hashClientSecret(clientSecret)))) {
      throw new Error(`the bootstrap client of org ${orgIdLower} vanished`);
    }
    return { clientId: client.id, clientSecret };
  }
}

type ValidClient = Omit<OAuthClient, 'id' | 'secretHash'>;

/** Every rule of contract §6 for a new client; all broken ones are reported at once. */
/**
 * Whether `clientId` may name a client at all: 1–200 characters, no control character (Postgres
 * refuses U+0000 in text, so such an id must not reach a query; it names no client).
 */
function mayNameClient(clientId: string): boolean {
  return clientId.length > 0 && clientId.length <= 200 && !hasControlCharacter(clientId);
}

const noClient = (clientId: string) => new DomainError('not_found', `No client ${JSON.stringify(clientId)}.`);

function validateNewClient(request: NewClientRequest): ValidClient {
  const errors: FieldError[] = [];
  const name = request.name.trim();
  const scopes = [...new Set(request.scopes)].sort();
  const roles = [...new Set(request.roles ?? [])];
  const type = request.type ?? 'confidential';
  const grantTypes = [...new Set(request.grantTypes ?? [CLIENT_CREDENTIALS])];
  const redirectUris = [...new Set(request.redirectUris ?? [])];
  if (!UUID.test(request.orgId)) errors.push({ field: 'org_id', message: 'must be a UUID' });
  // Characters as org and display names count them (code points, not UTF-16 units), and no control
  // character: the name is shown on the login page and in list-clients' lines, where a newline or an
  // escape sequence forged what the operator read.
  const nameLength = [...name].length;
  if (nameLength < 1 || nameLength > 100) errors.push({ field: 'name', message: 'must be 1–100 characters' });
  else if (hasControlCharacter(name)) errors.push({ field: 'name', message: 'must not contain control characters' });
  if (scopes.length === 0)
    errors.push({ field: 'scopes', message: `must name at least one of ${KNOWN_SCOPES.join(' ')}` });
  const unknown = scopes.filter((scope) => !KNOWN_SCOPES.includes(scope));
  if (unknown.length > 0) {
    errors.push({ field: 'scopes', message: `unknown scope ${unknown.join(' ')}; known: ${KNOWN_SCOPES.join(' ')}` });
  }
  const badRoles = roles.filter((role) => !isRole(role));
  if (badRoles.length > 0)
    errors.push({ field: 'roles', message: `unknown role ${badRoles.join(' ')}; known: ${ROLES.join(' ')}` });
  if (!CLIENT_TYPES.includes(type)) errors.push({ field: 'type', message: 'must be confidential or public' });
  errors.push(...grantTypeProblems(type, grantTypes));
  errors.push(...redirectUriProblems(grantTypes, redirectUris));
  if (errors.length > 0) throw validationFailed(errors);
  const granted = roles.length > 0 ? roles : [leastRoleCovering(scopes)];
  const beyond = scopes.filter((scope) => !scopesOfRoles(granted).includes(scope));
  if (beyond.length > 0) {
    throw validationFailed([
      { field: 'scopes', message: `${beyond.join(' ')} is beyond the roles ${granted.join(' ')}` },
    ]);
  }
  return {
    orgId: request.orgId.toLowerCase(),
    name,
    type: type as ClientType,
    grantTypes,
    redirectUris,
    scopes,
    roles: granted,
  };
}

function grantTypeProblems(type: string, grantTypes: readonly string[]): FieldError[] {
  const field = 'grant_types';
  const unknown = grantTypes.filter((grant) => !GRANT_TYPES.includes(grant));
  if (unknown.length > 0) {
    return [{ field, message: `unknown grant type ${unknown.join(' ')}; known: ${GRANT_TYPES.join(' ')}` }];
  }
  if (grantTypes.length === 0) return [{ field, message: `must name at least one of ${GRANT_TYPES.join(' ')}` }];
  if (type === 'public' && grantTypes.includes(CLIENT_CREDENTIALS)) {
    return [{ field, message: 'a public client has no secret, so it cannot use client_credentials' }];
  }
  if (
    grantTypes.includes(REFRESH_TOKEN) &&
    !grantTypes.some((grant) => grant === AUTHORIZATION_CODE || grant === PASSWORD)
  ) {
    return [
      { field, message: 'refresh_token needs authorization_code or password, the grants that issue refresh tokens' },
    ];
  }
  return [];
}

function redirectUriProblems(grantTypes: readonly string[], redirectUris: readonly string[]): FieldError[] {
  const field = 'redirect_uris';
  if (!grantTypes.includes(AUTHORIZATION_CODE)) {
    return redirectUris.length > 0 ? [{ field, message: 'are only used by the authorization_code grant' }] : [];
  }
  if (redirectUris.length === 0) return [{ field, message: 'authorization_code needs at least one redirect URI' }];
  if (redirectUris.length > MAX_REDIRECT_URIS) return [{ field, message: `at most ${MAX_REDIRECT_URIS}` }];
  return redirectUris.flatMap((uri) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ field, message: problem }] : [];
  });
}

/** The least powerful role whose default scopes include all of `scopes` (admin has every known scope). */
function leastRoleCovering(scopes: readonly string[]): Role {
  const fromLeast = [...ROLES].reverse();
  return fromLeast.find((role) => scopes.every((scope) => ROLE_DEFAULT_SCOPES[role].includes(scope))) ?? 'admin';
}
