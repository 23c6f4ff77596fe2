import { Global, Module } from '@nestjs/common';

/** Where "now" comes from, so tests move time instead of sleeping (idempotency expiry, abandoned claims). */
export interface Clock {
  now(): Date;
}

export const CLOCK = Symbol('CLOCK');
export const systemClock: Clock = { now: () => new Date() };

@Global()
@Module({ providers: [{ provide: CLOCK, useValue: systemClock }], exports: [CLOCK] })
export class ClockModule {}
