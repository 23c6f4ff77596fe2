export * from './common-env';
export * from './load-config';
export * from './service-version';
