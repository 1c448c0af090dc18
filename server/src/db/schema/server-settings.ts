import { pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.js';

/** Server-wide key/value settings that must survive restarts, such as the API-key salt. */
export const serverSettings = pgTable('server_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

export type ServerSetting = typeof serverSettings.$inferSelect;
export type NewServerSetting = typeof serverSettings.$inferInsert;
