// The argon2 bound: how many password verifications (or hashes) per second this machine can do with
// identity's own PasswordHasher and parameters, nothing else running in the process.
//   node -r ./tools/run-ts.cjs bench/argon2-bound.ts <verify|hash> <seconds> <warm-up seconds> <in flight>
// Run it with the identity process's UV_THREADPOOL_SIZE: the `argon2` package hashes on libuv's thread
// pool, so that is how many threads the service hashes on. Prints one JSON line on stdout.
import { z } from 'zod';

import { identityEnv } from '../apps/identity/src/config';
import { PasswordHasher } from '../apps/identity/src/passwords/password-hasher';

const [mode, secondsArgument, warmupArgument, inFlightArgument] = process.argv.slice(2);
if (mode !== 'verify' && mode !== 'hash') throw new Error('usage: argon2-bound.ts <verify|hash> <s> <warm-up s> <n>');

// Exactly the service's settings: its schema, its defaults, the same environment.
const settings = z
  .object({
    ARGON2_MEMORY_KIB: identityEnv.ARGON2_MEMORY_KIB,
    ARGON2_ITERATIONS: identityEnv.ARGON2_ITERATIONS,
    ARGON2_PARALLELISM: identityEnv.ARGON2_PARALLELISM,
  })
  .parse(process.env);
const hasher = new PasswordHasher(settings);
const password = 'bench-admin-password-1';

async function run(seconds: number, inFlight: number): Promise<number> {
  const stored = await hasher.hash(password);
  const one = mode === 'verify' ? () => hasher.verifyOrBurn(stored, password) : () => hasher.hash(password);
  const end = Date.now() + seconds * 1000;
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        await one();
        done += 1;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return done / elapsed;
}

void (async () => {
  const inFlight = Math.max(1, Number(inFlightArgument) || 10);
  const warmup = Number(warmupArgument) || 0;
  if (warmup > 0) await run(warmup, inFlight);
  const perSecond = await run(Math.max(1, Number(secondsArgument) || 10), inFlight);
  process.stdout.write(
    `${JSON.stringify({
      mode,
      per_second: Math.round(perSecond * 10) / 10,
      threads: Number(process.env.UV_THREADPOOL_SIZE) || 4,
      in_flight: inFlight,
      memory_kib: settings.ARGON2_MEMORY_KIB,
      iterations: settings.ARGON2_ITERATIONS,
      parallelism: settings.ARGON2_PARALLELISM,
    })}\n`,
  );
})();
