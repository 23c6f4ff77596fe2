export * from './logger';
export * from './metrics';
export * from './ops.module';
export * from './request-context';
