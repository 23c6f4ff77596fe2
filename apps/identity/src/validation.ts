import { FieldError, validationFailed } from '@acct/problem';

/** Collects every failing field of a request, so one answer lists them all (contract §1). */
export class FieldErrors {
  private readonly errors: FieldError[] = [];

  /** Records `problem` for `field` when there is one. */
  check(field: string, problem: string | undefined): void {
    if (problem !== undefined) this.errors.push({ field, message: problem });
  }

  /** Throws `validation_failed` listing every recorded field, if any. */
  throwIfAny(): void {
    if (this.errors.length > 0) throw validationFailed([...this.errors]);
  }
}
