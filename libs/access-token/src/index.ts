export * from './authorization';
export * from './bearer';
export * from './caller';
export * from './scopes';
export * from './verifier';
