import { Global, Module } from '@nestjs/common';

/**
 * Where "now" comes from, for every rule that reads the time (token lifetimes, lockout windows,
 * idempotency expiry, key retirement), so tests move it instead of sleeping. Inject `Clock` itself
 * (it is its own DI token); never call `Date.now()` in a rule.
 */
export abstract class Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  abstract now(): number;

  /** The same instant as a `Date` (for database columns). */
  date(): Date {
    return new Date(this.now());
  }
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}

/** A clock that stands still until a test moves it; starts at the real time, so tokens verify normally. */
export class FakeClock extends Clock {
  constructor(private current = Date.now()) {
    super();
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/** The system clock for every module of a process; tests override the `Clock` provider. */
@Global()
@Module({ providers: [{ provide: Clock, useClass: SystemClock }], exports: [Clock] })
export class ClockModule {}
