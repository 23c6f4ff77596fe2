import { Global, Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeyReadiness, SigningKeyService } from './signing-key.service';

/** Global: auth's own access-token verifier (in the service core) reads these keys too. */
@Global()
@Module({
  imports: [PrismaModule],
  providers: [SigningKeyRepository, SigningKeyService, SigningKeyReadiness],
  exports: [SigningKeyService, SigningKeyReadiness],
})
export class KeysModule {}
