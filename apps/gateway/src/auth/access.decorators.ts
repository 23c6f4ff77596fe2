import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'acct:public-route';
export const REQUIRED_SCOPE = 'acct:required-scope';

/** A route anyone may call without a token (token issuance, JWKS, health). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** The scope a bearer token must carry for this route. */
export const RequireScope = (scope: string) => SetMetadata(REQUIRED_SCOPE, scope);
