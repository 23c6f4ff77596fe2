import { Logger } from '@nestjs/common';

/** Nest's logs stay out of test output unless TEST_LOG_LEVEL is set. */
export function quietNestLogs(): void {
  Logger.overrideLogger(process.env.TEST_LOG_LEVEL ? ['error', 'warn', 'log'] : false);
}
