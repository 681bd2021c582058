export * from './ids';
export * from './errors';
export * from './turn';
export * from './events';
export * from './findings';
export * from './memory';
export * from './idempotency';
