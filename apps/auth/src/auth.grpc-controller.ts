import { authV1 } from '@acct/contracts';
import { bearerTokenOf, callerOf, PublicRpc, RequireCaller } from '@acct/grpc';
import { Metadata } from '@grpc/grpc-js';
import { Controller } from '@nestjs/common';

import { LoginAudit } from './audit/login-audit';
import { AuthorizationService } from './authorization/authorization.service';
import { SigningKeyService } from './keys/signing-key.service';
import { MfaService } from './mfa/mfa.service';
import { TokenService } from './tokens/token.service';

/** `auth.v1.AuthService`: token issuance and keys are public (the grant carries the credentials; keys are public). */
@Controller()
@PublicRpc()
@authV1.AuthServiceControllerMethods()
export class AuthGrpcController implements authV1.AuthServiceController {
  constructor(
    private readonly tokens: TokenService,
    private readonly keys: SigningKeyService,
    private readonly audit: LoginAudit,
    private readonly mfa: MfaService,
    private readonly authorization: AuthorizationService,
  ) {}

  issueToken(request: authV1.IssueTokenRequest): Promise<authV1.IssueTokenResponse> {
    return this.tokens.issue({
      grantType: request.grantType,
      username: request.username,
      password: request.password,
      scope: request.scope,
      mfaCode: request.mfaCode,
      clientId: request.clientId,
      clientSecret: request.clientSecret,
      refreshToken: request.refreshToken,
      clientIp: request.clientIp,
      deviceId: request.deviceId,
      userAgent: request.userAgent,
      code: request.code,
      redirectUri: request.redirectUri,
      codeVerifier: request.codeVerifier,
    });
  }

  checkAuthorization(request: authV1.CheckAuthorizationRequest): Promise<authV1.CheckAuthorizationResponse> {
    return this.authorization.check(request);
  }

  authorize(request: authV1.AuthorizeRequest): Promise<authV1.AuthorizeResponse> {
    return this.authorization.authorize(request);
  }

  async getJwks(): Promise<authV1.GetJwksResponse> {
    return { keys: await this.keys.publishedKeys() };
  }

  /** Not public: the org's admins only (checked in LoginAudit). */
  @RequireCaller()
  async listLoginAudit(
    request: authV1.ListLoginAuditRequest,
    metadata?: Metadata,
  ): Promise<authV1.ListLoginAuditResponse> {
    return { entries: await this.audit.list(callerOf(metadata), request.limit, request.before) };
  }

  /** Not public: the calling user (checked in MfaService). */
  @RequireCaller()
  enrollTotp(_request: authV1.EnrollTotpRequest, metadata?: Metadata): Promise<authV1.EnrollTotpResponse> {
    return this.mfa.enroll(callerOf(metadata), bearerTokenOf(metadata) ?? '');
  }

  @RequireCaller()
  confirmTotp(request: authV1.ConfirmTotpRequest, metadata?: Metadata): Promise<authV1.ConfirmTotpResponse> {
    return this.mfa.confirm(callerOf(metadata), request.code);
  }
}
