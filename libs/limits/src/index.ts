export * from './tiers';
export * from './token-bucket';
