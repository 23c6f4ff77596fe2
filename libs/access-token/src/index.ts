export * from './caller';
export * from './scopes';
export * from './verifier';
