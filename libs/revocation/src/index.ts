export * from './redis-revocation-log';
export * from './revocation';
export * from './revocation.module';
export * from './revocation-set';
export * from './revocations';
