// Generated from proto/ by `npm run generate` (buf + ts-proto); never edit the generated files.
export * as authV1 from './generated/auth/v1/auth';
export * as healthV1 from './generated/grpc/health/v1/health';
export * as identityV1 from './generated/identity/v1/identity';
export * as platformV1 from './generated/platform/v1/platform';
