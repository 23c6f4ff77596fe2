import { Global, Module } from '@nestjs/common';

/**
 * The time every rule of this service reads (token lifetimes, grace windows, key retirement), so tests
 * can move it instead of sleeping. Milliseconds since the epoch, like `Date.now()`.
 */
export abstract class Clock {
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}

/** The system clock for every module; tests override the `Clock` provider. */
@Global()
@Module({ providers: [{ provide: Clock, useClass: SystemClock }], exports: [Clock] })
export class ClockModule {}
