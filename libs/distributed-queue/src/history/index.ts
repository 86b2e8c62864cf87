export * from './history-event';
export { PgHistoryStore } from './pg-history.store';
export type { PgHistoryOptions } from './pg-history.options';
export type { HistorySearch, HistoryPage } from './history-search';
export type { HistoryStatus } from './pg-history.schema';
