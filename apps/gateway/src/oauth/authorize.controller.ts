import { randomBytes } from 'node:crypto';

import { authV1 } from '@acct/contracts';
import { DomainError, hasControlCharacter } from '@acct/problem';
import type {} from '@fastify/cookie';
import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { Public } from '../auth/access.decorators';
import { AuthBackend } from '../backends/backends.module';
import { GatewayIdentity } from '../backends/gateway-identity';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { clientAddress } from '../http/client-address';
import { oauthErrorDescription } from '../http/oauth-error-description';
import { retryAfterSeconds } from '../http/problem';
import { FORM_CONTENT_TYPE, FORM_ONLY, isPlainObject, mediaTypeOf } from '../http/request-body';
import { issuerPath } from '../http/well-known';
import { ApiProblems } from '../openapi/api.decorators';
import { RateLimited, rateLimitRefusalOf } from '../rate-limits/rate-limited.decorator';
import {
  contentSecurityPolicy,
  errorPage,
  HiddenFields,
  Language,
  languageOf,
  lockedMessage,
  loginPage,
  Message,
  message,
  mfaPage,
  noticePage,
  throttledMessage,
} from './login-page';

/** The login page's CSRF cookie: a random nonce; the form carries auth's HMAC of it and the request. */
export const CSRF_COOKIE = 'oauth_csrf';
/**
 * The login page's device cookie: the device credential auth issued at this browser's last sign-in
 * (signed by auth, bound to the account), which exempts it from the account-wide ceiling.
 */
export const DEVICE_COOKIE = 'device_token';
/** As long as the credential lives (auth's DEVICE_CREDENTIAL_TTL_SECONDS); each sign-in renews both. */
const DEVICE_COOKIE_MAX_AGE_SECONDS = 90 * 24 * 60 * 60;
const NONCE = /^[A-Za-z0-9_-]{43}$/;
/** Unicode Cc, as `@acct/problem` counts them: left out of the e-mail shown again. */
const CONTROL_CHARACTERS = /\p{Cc}/gu;
const PATH = '/v2/auth/authorize';

/**
 * Where the browser finds the authorization endpoint: PATH under the issuer's path. Behind a proxy's
 * prefix the issuer names it (`https://example.com/accounts`, README "Sign in from a browser app") and
 * the proxy strips it, so the page is at `/accounts/v2/auth/authorize` for the browser: its form must
 * post there, and its cookies must have that path, or the browser never sends them back with the form.
 */
export const publicAuthorizePath = (issuer: string): string => `${issuerPath(issuer)}${PATH}`;
/** No real parameter comes near this; longer ones are refused before they reach auth. */
const MAX_PARAMETER_LENGTH = 1024;
/**
 * But an MFA ticket, which names the user's e-mail twice (the username typed and the user's own, up to
 * 254 characters each) in base64url: some 1,050 characters for the longest e-mails.
 */
const MAX_FIELD_LENGTH: Readonly<Record<string, number>> = { mfa_ticket: 4 * MAX_PARAMETER_LENGTH };

const REQUEST_FIELDS = {
  responseType: 'response_type',
  clientId: 'client_id',
  redirectUri: 'redirect_uri',
  scope: 'scope',
  codeChallenge: 'code_challenge',
  codeChallengeMethod: 'code_challenge_method',
} as const satisfies Record<keyof authV1.AuthorizationParameters, string>;

interface AuthorizationRequest {
  parameters: authV1.AuthorizationParameters;
  state: string;
  /**
   * A known parameter sent twice or too long (RFC 6749 §3.1), or one of the authorization request's
   * holding a control character: the request cannot be trusted.
   */
  malformed?: string;
  /**
   * Whether the parameters an error redirect is built from (client_id, redirect_uri, state) were each
   * sent once, without a control character: then a malformed request goes back to the client as
   * `invalid_request` (RFC 6749 §4.1.2.1) once its client and redirect URI check out; else it gets the
   * error page.
   */
  redirectable: boolean;
}

/** What an error redirect is addressed and matched by. */
const REDIRECT_PARAMETERS = new Set(['client_id', 'redirect_uri', 'state']);
/**
 * The authorization request's own parameters, in which a control character makes the request malformed
 * (the gateway's control-character hook leaves the authorization request's query to this controller).
 */
const AUTHORIZATION_PARAMETERS: ReadonlySet<string> = new Set([...Object.values(REQUEST_FIELDS), 'state']);
/** The login form's fields: the authorization request, and what the page carries and a person types. */
const FORM_FIELDS: ReadonlySet<string> = new Set([
  ...AUTHORIZATION_PARAMETERS,
  'client_name',
  'csrf_token',
  'mfa_ticket',
  'username',
  'password',
  'mfa_code',
]);

type CarriedRequest = AuthorizationRequest & { fields: Record<string, string> };

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? '';

/**
 * The authorization request's parameters from the query (GET: `known` is AUTHORIZATION_PARAMETERS) or
 * the login form (POST: FORM_FIELDS). Any other parameter is ignored, however often it is sent and
 * however long it is (RFC 6749 §3.1: unrecognised parameters are ignored).
 */
function authorizationRequest(source: unknown, known: ReadonlySet<string>): CarriedRequest {
  const input = isPlainObject(source) ? source : {};
  const fields: Record<string, string> = {};
  let malformed: string | undefined;
  let redirectable = true;
  for (const [name, value] of Object.entries(input)) {
    if (!known.has(name)) continue;
    const maxLength = MAX_FIELD_LENGTH[name] ?? MAX_PARAMETER_LENGTH;
    if (typeof value !== 'string' || value.length > maxLength) {
      malformed ??= `The ${name} parameter must be sent once, at most ${maxLength} characters.`;
      if (REDIRECT_PARAMETERS.has(name)) redirectable = false;
      continue;
    }
    if (AUTHORIZATION_PARAMETERS.has(name) && hasControlCharacter(value)) {
      malformed ??= `The ${name} parameter must not contain control characters.`;
      if (REDIRECT_PARAMETERS.has(name)) redirectable = false;
      continue;
    }
    fields[name] = value;
  }
  const parameters = Object.fromEntries(
    Object.entries(REQUEST_FIELDS).map(([key, name]) => [key, fields[name] ?? '']),
  ) as unknown as authV1.AuthorizationParameters;
  return { parameters, state: fields.state ?? '', malformed, redirectable, fields };
}

/**
 * `GET /v2/auth/authorize` and its login page (contract §6): auth decides (CheckAuthorization,
 * Authorize: the token endpoint's own login, lockouts and audit), this controller only renders.
 * An unknown client or redirect URI gets an error page, never a redirect; other errors go back to
 * the redirect URI with `error`, `error_description`, `state` and `iss` (RFC 9207); a sign-in ends
 * with `303` to `redirect_uri?code=…&state=…&iss=…`.
 */
@ApiTags('tokens')
@Controller()
export class AuthorizeController {
  /** The endpoint's path as the browser sees it (publicAuthorizePath): the form's action, the cookies' path. */
  private readonly publicPath: string;

  constructor(
    private readonly auth: AuthBackend,
    private readonly gateway: GatewayIdentity,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.publicPath = publicAuthorizePath(config.TOKEN_ISSUER);
  }

  @Get(PATH)
  @Public()
  // A person's browser shows the answer: a refusal of the per-IP limit is a page too, never JSON.
  @RateLimited('auth', { refusedByRoute: true })
  @ApiOperation({
    operationId: 'authorize',
    summary: 'Authorization endpoint: the login page of the authorization code flow with PKCE (HTML)',
    description:
      'RFC 6749 §4.1.1 with RFC 7636 (S256 only). Query: response_type=code, client_id, redirect_uri ' +
      '(registered, exact match; loopback http URIs on any port), scope, state, code_challenge, ' +
      'code_challenge_method=S256. Answers the login page (zh-CN, or English by Accept-Language).',
  })
  @ApiProduces('text/html')
  @ApiResponse({
    status: 200,
    description: 'The login page.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 303,
    description: 'An error sent back to the redirect URI: `error`, `error_description`, `state`, `iss`.',
    headers: { Location: { schema: { type: 'string' }, required: true } },
  })
  @ApiResponse({
    status: 400,
    description: 'Unknown client or unregistered redirect URI: an error page, never a redirect.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 429,
    description: 'Too many requests from this address (`auth` group): a page saying how long to wait.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 503,
    description: 'The service is unavailable: a page saying so, with `Retry-After`.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  async page(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const language = languageOf(request.headers['accept-language']);
    // Over the per-IP limit: a page saying how long to wait, and auth is not asked anything.
    const limited = rateLimitRefusalOf(request);
    if (limited) {
      const seconds = retryAfterOf(limited);
      return this.notice(reply, 429, seconds, noticePage(language, throttledMessage(language, seconds)));
    }
    const authorization = authorizationRequest(request.query, AUTHORIZATION_PARAMETERS);
    if (authorization.malformed && !authorization.redirectable) {
      return this.errorPage(reply, language, authorization.malformed);
    }
    const nonce = this.nonce(request, reply);
    let answer: authV1.CheckAuthorizationResponse;
    try {
      answer = await this.auth.call('checkAuthorization', { parameters: authorization.parameters, csrfNonce: nonce });
    } catch (error) {
      // The person's browser shows the answer, as the sign-in form's 503 (never a JSON problem); the
      // client and redirect URI are not checked, so nothing goes back to them.
      if (!(error instanceof DomainError) || error.code !== 'service_unavailable') throw error;
      const seconds = retryAfterOf(error);
      return this.notice(reply, 503, seconds, noticePage(language, message(language, 'unavailable')));
    }
    if (answer.errorPage) return this.errorPage(reply, language, answer.errorDescription);
    if (authorization.malformed)
      return this.redirectError(reply, authorization, 'invalid_request', authorization.malformed);
    if (answer.error) return this.redirectError(reply, authorization, answer.error, answer.errorDescription);
    return this.html(
      reply,
      200,
      loginPage({
        language,
        clientName: answer.clientName,
        action: this.publicPath,
        fields: this.carried(authorization, answer.csrfToken, '', answer.clientName),
      }),
      authorization.parameters.redirectUri,
    );
  }

  @Post(PATH)
  @Public()
  @RateLimited('auth', { refusedByRoute: true })
  @ApiOperation({
    operationId: 'signIn',
    summary: 'The login form of the authorization endpoint (HTML form post)',
    description:
      'application/x-www-form-urlencoded: the authorization request, `csrf_token` (with the page’s cookie), ' +
      '`username` and `password`, or `mfa_ticket` and `mfa_code` for the second step. Same rate limit, ' +
      'lockout, ceiling and audit as `POST /v2/auth/token`. A sign-in sets the device cookie `device_token` ' +
      '(HttpOnly, Secure, SameSite=Lax, 90 days): the browser’s device credential, which exempts it from the ' +
      'account-wide ceiling on failed logins.',
  })
  @ApiProduces('text/html')
  @ApiResponse({
    status: 200,
    description: 'The two-step verification page (the account has MFA).',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 303,
    description: 'Signed in: `redirect_uri?code=…&state=…&iss=…` (or an error for the redirect URI).',
    headers: { Location: { schema: { type: 'string' }, required: true } },
  })
  @ApiResponse({
    status: 400,
    description: 'Wrong e-mail, password or code, or one holding a control character: the page again, with the error.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 403,
    description: 'The form is not valid for this browser (CSRF) or has expired.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 429,
    description:
      'Too many attempts: from this address (`auth` group) or for this account and address (lockout). The ' +
      'page again, saying how long to wait, with `Retry-After`.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 503,
    description: 'The service is unavailable: the page again, with the error and `Retry-After`.',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiProblems('payload_too_large', 'unsupported_media_type')
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const language = languageOf(request.headers['accept-language']);
    if (mediaTypeOf(request) !== FORM_CONTENT_TYPE) {
      throw new DomainError('unsupported_media_type', FORM_ONLY);
    }
    const authorization = authorizationRequest(request.body, FORM_FIELDS);
    if (authorization.malformed) return this.errorPage(reply, language, authorization.malformed);
    const { fields } = authorization;
    const nonce = this.cookieNonce(request) ?? '';
    const csrfToken = fields.csrf_token ?? '';
    const username = fields.username ?? '';
    const mfaTicket = fields.mfa_ticket ?? '';
    const page = (status: number, error: string, retryAfter?: number) => {
      const options = {
        language,
        clientName: fields.client_name ?? '',
        action: this.publicPath,
        fields: this.carried(authorization, csrfToken, mfaTicket),
        error,
      };
      if (retryAfter !== undefined) void reply.header('Retry-After', String(retryAfter));
      return this.html(
        reply,
        status,
        mfaTicket ? mfaPage(options) : loginPage({ ...options, email: username.replace(CONTROL_CHARACTERS, '') }),
        authorization.parameters.redirectUri,
      );
    };
    // Over the per-IP limit: the form again (what was typed is kept), and auth is not asked anything.
    const limited = rateLimitRefusalOf(request);
    if (limited) {
      const seconds = retryAfterOf(limited);
      return page(429, throttledMessage(language, seconds), seconds);
    }
    let answer: authV1.AuthorizeResponse;
    try {
      answer = await this.gateway.call('authorize', {
        parameters: authorization.parameters,
        username,
        password: fields.password ?? '',
        mfaCode: fields.mfa_code ?? '',
        mfaTicket,
        csrfNonce: nonce,
        csrfToken,
        // The token endpoint's canonical client address, so both count in the same lockout pair.
        clientIp: clientAddress(request),
        deviceId: headerValue(request.headers['x-device-id']).slice(0, 200),
        userAgent: headerValue(request.headers['user-agent']).slice(0, 400),
        deviceToken: (request.cookies[DEVICE_COOKIE] ?? '').slice(0, MAX_PARAMETER_LENGTH * 2),
      });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const seconds = retryAfterOf(error);
      if (error.code === 'forbidden') return this.html(reply, 403, errorPage(language, message(language, 'expired')));
      if (error.code === 'login_locked' || error.code === 'rate_limited') {
        return page(429, lockedMessage(language, seconds), seconds);
      }
      if (error.code === 'service_unavailable') return page(503, message(language, 'unavailable'), seconds);
      if (error.status !== 400) throw error;
      const typed = [username, fields.password ?? '', fields.mfa_code ?? ''];
      return page(400, message(language, refusalMessage(error, mfaTicket, typed.some(hasControlCharacter))));
    }
    if (answer.errorPage) return this.errorPage(reply, language, answer.errorDescription);
    if (answer.error) return this.redirectError(reply, authorization, answer.error, answer.errorDescription);
    if (answer.mfaTicket) {
      return this.html(
        reply,
        200,
        mfaPage({
          language,
          clientName: fields.client_name ?? '',
          action: this.publicPath,
          fields: this.carried(authorization, csrfToken, answer.mfaTicket),
        }),
        authorization.parameters.redirectUri,
      );
    }
    if (answer.deviceToken) {
      void reply.setCookie(DEVICE_COOKIE, answer.deviceToken, {
        httpOnly: true,
        secure: true,
        sameSite: 'lax',
        path: this.publicPath,
        maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS,
      });
    }
    return this.redirect(reply, authorization, { code: answer.code });
  }

  /** The authorization request, its state and CSRF token (and the MFA ticket) for the next form. */
  private carried(authorization: CarriedRequest, csrfToken: string, mfaTicket = '', clientName?: string) {
    const fields: HiddenFields = {};
    for (const [key, name] of Object.entries(REQUEST_FIELDS)) {
      fields[name] = authorization.parameters[key as keyof authV1.AuthorizationParameters];
    }
    return {
      ...fields,
      state: authorization.state,
      client_name: clientName ?? authorization.fields.client_name ?? '',
      csrf_token: csrfToken,
      mfa_ticket: mfaTicket,
    };
  }

  /** The browser's CSRF nonce; a new one (and its cookie) when it has none. */
  private nonce(request: FastifyRequest, reply: FastifyReply): string {
    const existing = this.cookieNonce(request);
    if (existing) return existing;
    const nonce = randomBytes(32).toString('base64url');
    void reply.setCookie(CSRF_COOKIE, nonce, {
      httpOnly: true,
      // Lax, not Strict: an app sends the browser here by a cross-site navigation, which carries no
      // Strict cookie, so every page load minted a new nonce and spoilt the forms of pages already
      // open (two tabs of an app: the first one's sign-in was refused). A cross-site form post still
      // carries none, and nobody else can read the page's token.
      sameSite: 'lax',
      path: this.publicPath,
      secure: request.protocol === 'https',
    });
    return nonce;
  }

  private cookieNonce(request: FastifyRequest): string | undefined {
    const nonce = request.cookies[CSRF_COOKIE];
    return nonce && NONCE.test(nonce) ? nonce : undefined;
  }

  private redirectError(reply: FastifyReply, authorization: AuthorizationRequest, error: string, description: string) {
    return this.redirect(reply, authorization, { error, error_description: oauthErrorDescription(description) });
  }

  /** `303` to the (registered) redirect URI with `params`, `state` and `iss` (RFC 9207). */
  private redirect(reply: FastifyReply, authorization: AuthorizationRequest, params: Record<string, string>) {
    const query = new URLSearchParams(params);
    if (authorization.state) query.set('state', authorization.state);
    query.set('iss', this.config.TOKEN_ISSUER);
    const uri = authorization.parameters.redirectUri;
    return reply
      .status(303)
      .header('Cache-Control', 'no-store')
      .header('Location', `${uri}${uri.includes('?') ? '&' : '?'}${query.toString()}`)
      .send();
  }

  /** A page that cannot be served now (`noticePage`), with how long to wait. */
  private notice(reply: FastifyReply, status: 429 | 503, seconds: number, page: string) {
    return this.html(reply.header('Retry-After', String(seconds)), status, page);
  }

  private errorPage(reply: FastifyReply, language: Language, description: string) {
    return this.html(reply, 400, errorPage(language, description));
  }

  private html(reply: FastifyReply, status: number, page: string, redirectUri?: string) {
    return reply
      .status(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', contentSecurityPolicy(redirectUri))
      .send(page);
  }
}

/** A refusal's `Retry-After` (whole seconds, at least 1), as the problem documents carry it. */
const retryAfterOf = (refusal: DomainError) => retryAfterSeconds(refusal.options.retryAfter ?? 1);

/**
 * What the page says about a 400 refusal of the sign-in. `controlCharacters`: what the person typed
 * holds one (auth refuses it as `invalid_request`, like the token endpoint).
 */
function refusalMessage(error: DomainError, mfaStep: string, controlCharacters: boolean): Message {
  if (error.code === 'invalid_grant') return mfaStep ? 'invalidCode' : 'invalidCredentials';
  if (error.code === 'account_not_active') return 'notActive';
  if (error.code === 'invalid_request') return controlCharacters ? 'controlCharacters' : 'missing';
  return 'refused';
}
