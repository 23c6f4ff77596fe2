import { randomUUID } from 'node:crypto';

import { isRole, Role, ROLE_DEFAULT_SCOPES, ROLES, scopesOfRoles } from '@acct/access-token';
import { FieldError, validationFailed } from '@acct/problem';
import { Injectable } from '@nestjs/common';

import { ClientRepository, OAuthClient } from './client.repository';
import { generateClientSecret, hashClientSecret, secretMatches } from './client-secret';

/** Every scope a client may be registered for: those some role has. */
export const KNOWN_SCOPES: readonly string[] = scopesOfRoles(ROLES);

export const CLIENT_CREDENTIALS = 'client_credentials';

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
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Confidential OAuth clients: registration, the org's bootstrap client, authentication. */
@Injectable()
export class ClientService {
  constructor(private readonly clients: ClientRepository) {}

  /**
   * The client whose id and secret these are, or undefined: an unknown id and a wrong secret fail
   * alike, after the same constant-time comparison.
   */
  async authenticate(clientId: string, clientSecret: string): Promise<OAuthClient | undefined> {
    const client = await this.clients.findForAuthentication(clientId);
    return secretMatches(clientSecret, client?.secretHash) && client ? client : undefined;
  }

  /** Registers a client_credentials client in `orgId`. */
  async create(request: NewClientRequest): Promise<ClientCredentials> {
    const { orgId, name, scopes, roles } = validateNewClient(request);
    const clientSecret = generateClientSecret();
    const clientId = randomUUID();
    await this.clients.create({
      id: clientId,
      orgId,
      name,
      secretHash: hashClientSecret(clientSecret),
      grantTypes: [CLIENT_CREDENTIALS],
      scopes,
      roles,
    });
    return { clientId, clientSecret };
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
      secretHash: hashClientSecret(clientSecret),
      grantTypes: [CLIENT_CREDENTIALS],
      scopes: [...ROLE_DEFAULT_SCOPES.admin],
      roles: ['admin'],
    });
    const client = await this.clients.findBootstrap(orgIdLower);
    if (!client) throw new Error(`the bootstrap client of org ${orgIdLower} vanished`);
    if (created) return { clientId: client.id, clientSecret };
    if (!rotateSecret) return { clientId: client.id, clientSecret: null };
    await this.clients.replaceSecret(orgIdLower, client.id, hashClientSecret(clientSecret));
    return { clientId: client.id, clientSecret };
  }
}

function validateNewClient(
  request: NewClientRequest,
): Required<NewClientRequest> & { scopes: string[]; roles: string[] } {
  const errors: FieldError[] = [];
  const name = request.name.trim();
  const scopes = [...new Set(request.scopes)].sort();
  const roles = [...new Set(request.roles ?? [])];
  if (!UUID.test(request.orgId)) errors.push({ field: 'org_id', message: 'must be a UUID' });
  if (name.length < 1 || name.length > 100) errors.push({ field: 'name', message: 'must be 1–100 characters' });
  if (scopes.length === 0)
    errors.push({ field: 'scopes', message: `must name at least one of ${KNOWN_SCOPES.join(' ')}` });
  const unknown = scopes.filter((scope) => !KNOWN_SCOPES.includes(scope));
  if (unknown.length > 0) {
    errors.push({ field: 'scopes', message: `unknown scope ${unknown.join(' ')}; known: ${KNOWN_SCOPES.join(' ')}` });
  }
  const badRoles = roles.filter((role) => !isRole(role));
  if (badRoles.length > 0)
    errors.push({ field: 'roles', message: `unknown role ${badRoles.join(' ')}; known: ${ROLES.join(' ')}` });
  if (errors.length > 0) throw validationFailed(errors);

  const granted = roles.length > 0 ? roles : [leastRoleCovering(scopes)];
  const beyond = scopes.filter((scope) => !scopesOfRoles(granted).includes(scope));
  if (beyond.length > 0) {
    throw validationFailed([
      { field: 'scopes', message: `${beyond.join(' ')} is beyond the roles ${granted.join(' ')}` },
    ]);
  }
  return { orgId: request.orgId.toLowerCase(), name, scopes, roles: granted };
}

/** The least powerful role whose default scopes include all of `scopes` (admin has every known scope). */
function leastRoleCovering(scopes: readonly string[]): Role {
  const fromLeast = [...ROLES].reverse();
  return fromLeast.find((role) => scopes.every((scope) => ROLE_DEFAULT_SCOPES[role].includes(scope))) ?? 'admin';
}
