import 'reflect-metadata';

import { runMain } from '@acct/grpc';
import { createLogger, createMetricsRegistry, NestPinoLogger, OpsModule } from '@acct/observability';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

import { NatsConnectionProvider } from './bus/nats.connection';
import { loadMailerConfig, MAILER_CONFIG, MailerConfig } from './config';
import { MailConsumer } from './mail/mail.consumer';

@Global()
@Module({})
class MailerModule {
  static forRoot(config: MailerConfig): DynamicModule {
    const providers = [{ provide: MAILER_CONFIG, useValue: config }, NatsConnectionProvider];
    return { module: MailerModule, providers, exports: providers };
  }
}

runMain('mailer', async () => {
  const config = loadMailerConfig();
  const logger = createLogger('mailer', config.LOG_LEVEL);
  const registry = createMetricsRegistry('mailer');

  @Module({
    imports: [MailerModule.forRoot(config), OpsModule.forRoot({ registry, readiness: [NatsConnectionProvider] })],
    providers: [MailConsumer],
  })
  class AppModule {}

  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    logger: new NestPinoLogger(logger),
  });
  app.enableShutdownHooks();
  await app.listen(config.MAILER_OPS_PORT, config.BIND_HOST);
  logger.info({ ops_port: config.MAILER_OPS_PORT }, 'mailer started');
});
