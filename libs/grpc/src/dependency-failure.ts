/**
 * Prisma error codes that mean the database could not be reached or did not answer in time, not
 * that the query was wrong: P1001 can't reach the server, P1002 timed out, P1008 operation timed
 * out, P1017 the server closed the connection, P2024 no pool connection in time, P2028 a
 * transaction that expired while the database hung, P2037 a server that takes no more connections;
 * P2034 a transaction Postgres aborted for a deadlock or a serialization failure (40P01, 40001), which
 * the same request sent again completes.
 */
const UNREACHABLE_DATABASE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034', 'P2037']);

/**
 * Node and `pg` failures of a connection, whatever wraps them; ENOTFOUND and EAI_AGAIN a host name that
 * does not resolve now (a stopped Compose service, a pod being rescheduled, a DNS outage), which `pg`
 * reports as is on the services' direct statements.
 */
const UNREACHABLE_SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** The same in words; `Query read timeout` is a statement unanswered past DATABASE_QUERY_TIMEOUT_MS. */
const UNREACHABLE_MESSAGE =
  /Can't reach database server|Connection terminated|timeout exceeded when trying to connect|Query read timeout/i;

/**
 * Postgres' own word that the server is going away or not there yet (SQLSTATE): class 08, a connection
 * exception; 57P01 a connection terminated by a shutdown or an operator (a restart, a failover,
 * `pg_terminate_backend`), 57P02 a crash, 57P03 a server still starting or shutting down; 53300 a
 * server, role or database at its connection limit (`max_connections`, `CONNECTION LIMIT`); 57014 a
 * statement cancelled (an operator's `statement_timeout`, `pg_cancel_backend`), 55P03 a lock not had
 * within `lock_timeout`; 40P01 a deadlock and 40001 a serialization failure, whose transaction
 * Postgres rolled back so that the other could go on (the same request again completes); 25006 a write
 * refused by a server in recovery (a failover's old primary back as a standby, still named by a pooler
 * or DNS: no transaction of ours is read-only). Prisma's driver adapter names some of these by kind and
 * keeps the SQLSTATE as `originalCode`.
 */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300|57014|55P03|40001|40P01|25006)$/;

/**
 * Whether a failure means one of the service's own dependencies (its database) is unreachable or
 * hung, or rolled the work back for a retry to complete (a deadlock, a serialization failure): the
 * caller should get `503 service_unavailable` and retry, not a 500.
 */
export function isDependencyUnavailable(failure: unknown): boolean {
  for (let current = failure, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth += 1) {
    const { code, originalCode, errorCode, name, message, cause, meta } = current as {
      code?: unknown;
      originalCode?: unknown;
      errorCode?: unknown;
      name?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    if (
      typeof code === 'string' &&
      (UNREACHABLE_DATABASE_CODES.has(code) || UNREACHABLE_SYSTEM_CODES.has(code) || UNREACHABLE_SQLSTATE.test(code))
    )
      return true;
    if (typeof originalCode === 'string' && UNREACHABLE_SQLSTATE.test(originalCode)) return true;
    if (typeof errorCode === 'string' && UNREACHABLE_DATABASE_CODES.has(errorCode)) return true;
    if (name === 'PrismaClientInitializationError') return true;
    if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return true;
    // Prisma's driver adapter keeps the driver's error (with its SQLSTATE) in `meta`, not as the cause.
    current = cause ?? meta?.driverAdapterError;
  }
  return false;
}
