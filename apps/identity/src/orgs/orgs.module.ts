import { Module } from '@nestjs/common';

import { PrismaModule } from '../prisma/prisma.module';
import { OrgsRepository } from './orgs.repository';

/** Orgs: created by the operator's bootstrap; users are created inside them. */
@Module({ imports: [PrismaModule], providers: [OrgsRepository], exports: [OrgsRepository] })
export class OrgsModule {}
