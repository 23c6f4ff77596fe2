import { Test } from '@nestjs/testing';

import { Clock, ClockModule, FakeClock, SystemClock } from './clock';

describe('Clock', () => {
  it('gives the same instant as a number and as a Date', () => {
    const clock = new FakeClock(1_700_000_000_000);
    expect(clock.date()).toEqual(new Date(1_700_000_000_000));
    clock.advance(1500);
    expect(clock.now()).toBe(1_700_000_001_500);
    expect(clock.date().getTime()).toBe(1_700_000_001_500);
  });

  it('is the system clock unless a test overrides the provider', async () => {
    const real = await Test.createTestingModule({ imports: [ClockModule] }).compile();
    expect(real.get(Clock)).toBeInstanceOf(SystemClock);
    const fake = new FakeClock(0);
    const moved = await Test.createTestingModule({ imports: [ClockModule] })
      .overrideProvider(Clock)
      .useValue(fake)
      .compile();
    expect(moved.get(Clock).now()).toBe(0);
  });
});
