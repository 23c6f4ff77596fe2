import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.service';
import { RefreshTokenRepository } from './refresh-token.repository';
import { RefreshTokenService } from './refresh-token.service';
import { RefreshTokenPruner } from './refresh-token-pruner';

@Module({
  imports: [PrismaModule],
  providers: [RefreshTokenRepository, RefreshTokenService, RefreshTokenPruner],
  exports: [RefreshTokenService],
})
export class RefreshModule {}
