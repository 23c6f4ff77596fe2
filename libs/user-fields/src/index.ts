export * from './user-fields';
