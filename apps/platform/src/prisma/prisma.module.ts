import { Module } from '@nestjs/common';

import { PlatformDatabaseReadiness, PrismaService } from './prisma.service';

@Module({ providers: [PrismaService, PlatformDatabaseReadiness], exports: [PrismaService, PlatformDatabaseReadiness] })
export class PrismaModule {}
