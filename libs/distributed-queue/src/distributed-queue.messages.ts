export const DUPLICATE_WORKER = (type: string, first: string, second: string): string =>
  `Task type "${type}" has two workers: ${first} and ${second}. One type has one @TaskWorker per application.`;
export const MISSING_HANDLE = (name: string, type: string): string =>
  `${name} is a @TaskWorker('${type}') but has no handle(task, signal) method (implement TaskHandler).`;
export const WORKERS_STARTED = (types: string[]): string =>
  types.length ? `Delay queue workers started for: ${types.join(', ')}` : 'No @TaskWorker found; submitting only';
