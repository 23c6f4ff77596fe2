export * from './databases';
export * from './dedicated-servers';
export * from './http';
export * from './local-object-storage';
export * from './ports';
export * from './stack';
export * from './tcp-proxy';
export * from './wait';
