import { Clock } from '../clock';

/** A clock that stands still until a test moves it. Starts at the real time, so tokens verify normally. */
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
