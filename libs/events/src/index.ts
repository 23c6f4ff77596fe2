export * from './drain';
export * from './durable-consumer';
export * from './envelope';
export * from './event-consumer';
export * from './publisher';
export * from './streams';
