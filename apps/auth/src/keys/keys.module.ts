import { Global, Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { AccessTokenIssuer } from './access-token.issuer';
import { JwksGrpcController } from './jwks.grpc-controller';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeyReadiness, SigningKeyService } from './signing-key.service';

/**
 * Signing keys and the access tokens signed with them. Global: auth's own access-token verifier (in
 * the service core) reads these keys too.
 */
@Global()
@Module({
  imports: [PrismaModule],
  controllers: [JwksGrpcController],
  providers: [SigningKeyRepository, SigningKeyService, SigningKeyReadiness, AccessTokenIssuer],
  exports: [SigningKeyService, SigningKeyReadiness, AccessTokenIssuer],
})
export class KeysModule {}
