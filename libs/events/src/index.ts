export * from './durable-consumer';
export * from './envelope';
export * from './streams';
