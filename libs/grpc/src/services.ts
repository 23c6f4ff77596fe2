import { authV1, identityV1, platformV1 } from '@acct/contracts';

/** Where each service's contract is: its proto package, its file under `proto/`, its service name. */
export interface GrpcServiceContract {
  /** For errors and logs: "the identity service is unavailable". */
  name: string;
  package: string;
  protoFile: string;
  service: string;
}

export const IDENTITY_SERVICE: GrpcServiceContract = {
  name: 'identity',
  package: 'identity.v1',
  protoFile: 'identity/v1/identity.proto',
  service: identityV1.IDENTITY_SERVICE_NAME,
};

export const AUTH_SERVICE: GrpcServiceContract = {
  name: 'auth',
  package: 'auth.v1',
  protoFile: 'auth/v1/auth.proto',
  service: authV1.AUTH_SERVICE_NAME,
};

export const PLATFORM_SERVICE: GrpcServiceContract = {
  name: 'platform',
  package: 'platform.v1',
  protoFile: 'platform/v1/platform.proto',
  service: platformV1.PLATFORM_SERVICE_NAME,
};
