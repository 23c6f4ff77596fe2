export * from './http-server';
export * from './logger';
export * from './metrics';
export * from './ops.module';
export * from './request-context';
export * from './shutdown';
export * from './time-limit';
export * from './tracing';
