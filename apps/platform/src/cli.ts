import 'reflect-metadata';

import { parseArgs } from 'node:util';

import { STANDARD_QUOTAS } from '@acct/limits';
import { DomainError } from '@acct/problem';

import { loadPlatformConfig } from './config';
import { PrismaService } from './prisma/prisma.service';
import { QuotasRepository } from './quotas/quotas.repository';
import { RateLimitsRepository } from './rate-limits/rate-limits.repository';
import { RateLimitsService } from './rate-limits/rate-limits.service';

const ORG_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Operator commands of the platform service, against its own database; one JSON line on stdout.
 *   set-rate-limit --org-id <id> --group <group> --rate-per-minute <n> --burst <n> --scope per-ip|per-token
 *   set-quota --org-id <id> --dimension <d> --name <quota name> --limit <n>
 */
async function main() {
  const [command, ...rest] = process.argv.slice(2);
  // A plain decimal number: Number() would read a blank as 0 (a quota nobody can use), and hex or
  // exponents are not what an operator types for a limit.
  const plainNumber = (value: string | undefined) => (/^\d+(?:\.\d+)?$/.test(value ?? '') ? Number(value) : NaN);
  // The org ids identity issues: anything else is a typo that would be stored for no org.
  const orgIdOf = (value: string | undefined) => {
    if (!ORG_ID.test(value ?? ''))
      throw new Error(`--org-id must be an org's id (a UUID), not ${JSON.stringify(value ?? '')}`);
    return value!.toLowerCase();
  };
  const prisma = new PrismaService(loadPlatformConfig());
  try {
    switch (command) {
      case 'set-rate-limit': {
        const { values } = parseArgs({
          args: rest,
          options: {
            'org-id': { type: 'string' },
            group: { type: 'string' },
            'rate-per-minute': { type: 'string' },
            burst: { type: 'string' },
            scope: { type: 'string' },
          },
        });
        const orgId = orgIdOf(values['org-id']);
        const rateLimits = new RateLimitsService(new RateLimitsRepository(prisma));
        await rateLimits.setOverride(orgId, {
          group: values.group ?? '',
          ratePerMinute: plainNumber(values['rate-per-minute']),
          burst: plainNumber(values.burst),
          scope: (values.scope ?? '') as 'per-ip',
        });
        // snake_case like every other answer of the CLI and the API.
        const tiers = (await rateLimits.tiersOf(orgId)).map(({ group, ratePerMinute, burst, scope }) => ({
          group,
          rate_per_minute: ratePerMinute,
          burst,
          scope,
        }));
        process.stdout.write(`${JSON.stringify({ org_id: orgId, tiers })}\n`);
        break;
      }
      case 'set-quota': {
        const { values } = parseArgs({
          args: rest,
          options: {
            'org-id': { type: 'string' },
            dimension: { type: 'string' },
            name: { type: 'string' },
            limit: { type: 'string' },
          },
        });
        const orgId = orgIdOf(values['org-id']);
        const limit = plainNumber(values.limit);
        const known = STANDARD_QUOTAS.find(
          (quota) => quota.dimension === values.dimension && quota.name === values.name,
        );
        // Users, instances and requests are counted whole: a fraction would be enforced as another limit
        // than the one shown (the gateways get the API requests limit as an integer).
        // And exactly: past 2^53 a number is not the one typed, and the gateways' 64-bit copy of a larger
        // one wraps (10^19 arrived negative, 2^64 as 0: every request of the org refused).
        const whole = known?.unit === 'count' || known?.unit === 'req/day';
        if (!orgId || !known || !Number.isFinite(limit) || limit < 0 || (whole && !Number.isSafeInteger(limit))) {
          throw new Error(
            'set-quota needs --org-id, a known --dimension/--name pair and a --limit ≥ 0 ' +
              `(a whole number up to ${Number.MAX_SAFE_INTEGER} for a count)`,
          );
        }
        await new QuotasRepository(prisma).setOverride(orgId, values.dimension!, values.name!, limit);
        process.stdout.write(
          `${JSON.stringify({ org_id: orgId, dimension: values.dimension, name: values.name, limit })}\n`,
        );
        break;
      }
      default:
        throw new Error(
          'usage: cli.ts set-rate-limit --org-id <id> --group <g> --rate-per-minute <n> --burst <n> --scope <s>',
        );
    }
  } finally {
    await prisma.$disconnect();
  }
}

/** A command line node:util parseArgs could not understand (an unknown option, a missing value). */
const isUsageError = (error: unknown) => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
};

main().catch((error: unknown) => {
  const message =
    error instanceof DomainError ? `${error.detail} ${JSON.stringify(error.options.errors ?? [])}` : String(error);
  process.stderr.write(`${message}\n`);
  process.exit(isUsageError(error) || String(error).includes('usage:') ? 2 : 1);
});
