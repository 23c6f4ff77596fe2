export * from './durable-consumer';
export * from './envelope';
export * from './publisher';
export * from './streams';
