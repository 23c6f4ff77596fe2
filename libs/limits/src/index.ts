export * from './client-address';
export * from './quotas';
export * from './tiers';
export * from './token-bucket';
