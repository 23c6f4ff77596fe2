import { DomainError } from '@acct/problem';

/** The DomainError `work` fails with; the test fails when it succeeds or fails otherwise. */
export async function refusal(work: Promise<unknown>): Promise<DomainError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal, but the call succeeded');
}
