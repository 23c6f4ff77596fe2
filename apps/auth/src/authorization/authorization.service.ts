import { scopesOfRoles } from '@acct/access-token';
import { authV1 } from '@acct/contracts';
import { DomainError, hasControlCharacter } from '@acct/problem';
import { Revocations } from '@acct/revocation';
import { Injectable } from '@nestjs/common';

import { AuthorizationCodes } from '../authorization-codes/authorization-codes';
import { OAuthClient } from '../clients/client.repository';
import { ClientService } from '../clients/client.service';
import { VerifiedUser } from '../identity/identity.client';
import { attemptOf, LoginCredential, PasswordLogin, userAwaitingMfa } from '../login/password-login';
import { AUTHORIZE } from '../metrics/auth-metrics';
import { grantScopes } from '../oauth/scope';
import { TokenService } from '../tokens/token.service';
import {
  AuthorizationError,
  AuthorizationParameters,
  authorizationRequestError,
  emptyParameters,
  requestFingerprint,
} from './authorization-request';
import { SignInSeals } from './sign-in-seals';

const NO_ERROR = { error: '', errorDescription: '', errorPage: false };

type Checked = { client: OAuthClient; scopes: string[]; error?: undefined } | { error: AuthorizationError };

/**
 * The authorization endpoint (contract §6): checks authorization requests, and signs users in on the
 * login page with the token endpoint's own password login (PasswordLogin: the same lockout, ceiling
 * and MFA; TokenService.recorded: the same audit and metrics), then issues an authorization code.
 */
@Injectable()
export class AuthorizationService {
  constructor(
    private readonly clients: ClientService,
    private readonly codes: AuthorizationCodes,
    private readonly login: PasswordLogin,
    private readonly tokens: TokenService,
    private readonly seals: SignInSeals,
    private readonly revocations: Revocations,
  ) {}

  async check(request: authV1.CheckAuthorizationRequest): Promise<authV1.CheckAuthorizationResponse> {
    const parameters = request.parameters ?? emptyParameters();
    const checked = await this.checked(parameters);
    if (checked.error) return { ...checked.error, clientName: '', csrfToken: '' };
    const csrfToken = this.seals.csrfToken(request.csrfNonce, requestFingerprint(parameters));
    return { ...NO_ERROR, clientName: checked.client.name, csrfToken };
  }

  async authorize(request: authV1.AuthorizeRequest): Promise<authV1.AuthorizeResponse> {
    const parameters = request.parameters ?? emptyParameters();
    const checked = await this.checked(parameters);
    if (checked.error) return { ...checked.error, code: '', mfaTicket: '', deviceToken: '' };
    const fingerprint = requestFingerprint(parameters);
    if (!this.seals.csrfTokenMatches(request.csrfNonce, fingerprint, request.csrfToken)) {
      throw new DomainError('forbidden', 'The sign-in form is not valid for this browser or request; start again.');
    }
    const ticket = request.mfaTicket ? this.seals.openMfaTicket(request.mfaTicket, fingerprint) : undefined;
    // A ticket is the user as it was at the password step: once the user's sessions have ended since
    // (disabled, deleted, its password set or reset), the sign-in is over and gets no code.
    const ended =
      ticket && this.revocations.set.subjectRevokedAfter(ticket.user.orgId, ticket.user.id, ticket.checkedAt);
    if (request.mfaTicket && (!ticket || ended)) {
      throw new DomainError('forbidden', 'The sign-in took too long or is not valid; start again.');
    }
    const username = ticket?.username ?? request.username.trim().toLowerCase();
    const credential: LoginCredential = ticket
      ? { passwordCheckedFor: ticket.user, checkedAt: ticket.checkedAt }
      : { password: request.password };
    const audited = {
      grantType: AUTHORIZE,
      username,
      password: '',
      scope: parameters.scope,
      mfaCode: request.mfaCode,
      clientId: checked.client.id,
      clientSecret: '',
      refreshToken: '',
      clientIp: request.clientIp,
      deviceId: request.deviceId,
      userAgent: request.userAgent,
    };
    try {
      const code = await this.tokens.recorded(
        audited,
        async () => {
          // As the token endpoint: refused before any lookup, not counted, audited with the value escaped.
          if ([ticket ? '' : request.username, request.password, request.mfaCode].some(hasControlCharacter)) {
            throw new DomainError('invalid_request', 'The sign-in fields must not contain control characters.');
          }
          if (!username || (!ticket && !request.password)) {
            throw new DomainError('invalid_request', 'Enter your e-mail and password.');
          }
          const scopesFor = (user: VerifiedUser): string[] => {
            const granted = checked.scopes.filter((scope) => scopesOfRoles(user.roles).includes(scope));
            if (granted.length === 0) {
              throw new DomainError('invalid_scope', 'The account holds none of the scopes asked for.');
            }
            return granted;
          };
          // Judged before an MFA code is spent too: a sign-in refused for its scope keeps its code.
          const { user, deviceToken, checkedAt } = await this.login.verify(
            attemptOf(request, username),
            credential,
            scopesFor,
          );
          const scopes = scopesFor(user);
          const issued = await this.codes.issue(
            {
              clientId: checked.client.id,
              redirectUri: parameters.redirectUri,
              codeChallenge: parameters.codeChallenge,
              userId: user.id,
              orgId: user.orgId,
              scopes,
              roles: user.roles,
            },
            checkedAt,
          );
          return { code: issued, user, deviceToken };
        },
        ({ user }) => ({ subject: user.id, orgId: user.orgId }),
      );
      return { ...NO_ERROR, code: code.code, mfaTicket: '', deviceToken: code.deviceToken };
    } catch (error) {
      const awaiting = userAwaitingMfa(error);
      if (awaiting) {
        return {
          ...NO_ERROR,
          code: '',
          // The ticket's sign-in began when the password was checked, not when the check answered: a
          // password set or a disable while identity checked it ends the sign-in at its code step, as it
          // ends a password login. A ticket answered with another mfa_required keeps its time and deadline.
          mfaTicket: this.seals.mfaTicket(username, awaiting.user, fingerprint, awaiting.checkedAt),
          deviceToken: '',
        };
      }
      if (error instanceof DomainError && error.code === 'invalid_scope') {
        const refused = { error: 'invalid_scope', errorDescription: error.detail, errorPage: false };
        return { ...refused, code: '', mfaTicket: '', deviceToken: '' };
      }
      throw error;
    }
  }

  private async checked(parameters: AuthorizationParameters): Promise<Checked> {
    const client = await this.clients.find(parameters.clientId);
    const error = authorizationRequestError(parameters, client);
    if (error || !client)
      return { error: error ?? { error: 'invalid_request', errorDescription: '', errorPage: true } };
    try {
      return { client, scopes: grantScopes(parameters.scope, client.scopes) };
    } catch (refusal) {
      if (!(refusal instanceof DomainError)) throw refusal;
      return { error: { error: 'invalid_scope', errorDescription: refusal.detail, errorPage: false } };
    }
  }
}
