import type { GaugeDefinition } from './gauge-definition';

/**
 * The scrape-time gauges of the groups of delay-queue types (`TaskGroupsService.getGroups(type, { limit: 1 })`,
 * O(log n) per type whatever the number of groups): one series per type, never one per group, so the label
 * cardinality stays that of the types.
 */
export const GROUP_GAUGES: GaugeDefinition[] = [
  {
    suffix: 'groups_waiting',
    help: 'Groups of each delay-queue type with waiting tasks (delayed or due), read from Redis at scrape time',
    labelNames: ['type'],
    fill: (gauge, { groups }) => {
      for (const { type, waiting } of groups ?? []) gauge.set({ type }, waiting);
    },
  },
  {
    suffix: 'group_backlog_max',
    help: 'Waiting tasks of the group with the largest backlog, per delay-queue type (0: no group waits), read from Redis at scrape time',
    labelNames: ['type'],
    fill: (gauge, { groups }) => {
      for (const { type, backlogMax } of groups ?? []) gauge.set({ type }, backlogMax);
    },
  },
];
