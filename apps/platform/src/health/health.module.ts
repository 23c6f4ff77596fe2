import { S3Client } from '@aws-sdk/client-s3';
import { Module } from '@nestjs/common';

import { PLATFORM_CONFIG, PlatformConfig } from '../config';
import { PrismaModule } from '../prisma/prisma.module';
import { PrismaService } from '../prisma/prisma.service';
import { HealthGrpcController } from './health.grpc-controller';
import { HealthMonitor } from './health-monitor.service';
import { BackendServiceProbe, CacheProbe, DatabaseProbe, MessageBusProbe, ObjectStorageProbe, PROBES } from './probes';

@Module({
  imports: [PrismaModule],
  controllers: [HealthGrpcController],
  providers: [
    HealthMonitor,
    {
      provide: PROBES,
      inject: [PLATFORM_CONFIG, PrismaService],
      useFactory: (config: PlatformConfig, prisma: PrismaService) => [
        new DatabaseProbe(prisma),
        new CacheProbe(config.REDIS_URL, config.HEALTH_PROBE_TIMEOUT_MS, config.REDIS_KEY_PREFIX),
        new ObjectStorageProbe(
          new S3Client({
            endpoint: config.S3_ENDPOINT,
            region: config.S3_REGION,
            forcePathStyle: config.S3_FORCE_PATH_STYLE,
            credentials: { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY },
            maxAttempts: 1,
          }),
          config.S3_BUCKET,
        ),
        new MessageBusProbe(config.NATS_URL),
        new BackendServiceProbe('identity', config.IDENTITY_GRPC_ADDR, config.PROTO_DIR),
        new BackendServiceProbe('auth', config.AUTH_GRPC_ADDR, config.PROTO_DIR),
      ],
    },
  ],
  exports: [HealthMonitor],
})
export class HealthModule {}
