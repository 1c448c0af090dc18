export * from './workspaces.js';
export * from './api-keys.js';
export * from './server-settings.js';
export * from './memories.js';
export * from './memory-chunks.js';
export * from './memory-links.js';
export * from './audit-log.js';
export { parseVectorLiteral, toVectorLiteral } from './columns.js';
export * from './idempotency-records.js';
