import { ClockModule } from '@acct/clock';
import { NestPinoLogger, OpsModule } from '@acct/observability';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';

import { NatsConnectionProvider } from './bus/nats.connection';
import { MAILER_CONFIG, MAILER_LOGGER, MailerConfig } from './config';
import { MailConsumer } from './mail/mail.consumer';

@Global()
@Module({})
class MailerModule {
  static forRoot(config: MailerConfig, logger: Logger): DynamicModule {
    const providers = [
      { provide: MAILER_CONFIG, useValue: config },
      { provide: MAILER_LOGGER, useValue: logger },
      NatsConnectionProvider,
    ];
    return { module: MailerModule, providers, exports: providers };
  }
}

/** The mailer: its mail consumer and its ops port (/livez, /readyz, /metrics). */
export async function startMailer(
  config: MailerConfig,
  logger: Logger,
  registry: Registry,
): Promise<NestFastifyApplication> {
  @Module({
    imports: [
      MailerModule.forRoot(config, logger),
      ClockModule,
      OpsModule.forRoot({ registry, readiness: [NatsConnectionProvider] }),
    ],
    providers: [MailConsumer],
  })
  class AppModule {}

  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: new NestPinoLogger(logger),
  });
  await app.listen(config.MAILER_OPS_PORT, config.BIND_HOST);
  logger.info({ ops_port: config.MAILER_OPS_PORT }, 'mailer started');
  return app;
}
