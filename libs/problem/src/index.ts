export * from './control-characters';
export * from './domain-error';
export * from './error-codes';
export * from './problem-document';
