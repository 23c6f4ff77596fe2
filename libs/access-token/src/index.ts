export * from './authorization';
export * from './bearer';
export * from './caller';
export * from './key-withdrawals';
export * from './revocation-check';
export * from './scopes';
export * from './verifier';
