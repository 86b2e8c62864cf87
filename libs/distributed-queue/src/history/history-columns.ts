import type { BatchEntry } from './history-store';
import { ARRAY_FIELDS } from './pg-history.fold-sql';

/** Each array field's place among the array parameters. */
const FIELD_INDEX = new Map<string, number>(ARRAY_FIELDS.map((f, i) => [f, i]));

/**
 * The fold statement's first 14 parameters for a batch of raw stream entries (see foldUpsertSql): one JSON
 * array per field, one element per entry. The entries' own texts are pasted in as they are (the array
 * fields are JSON already): nothing per task is parsed or built here.
 */
export function historyColumns(entries: readonly BatchEntry[]): string[] {
  const ids: string[] = [];
  const events: string[] = [];
  const machines: string[] = [];
  const only: string[] = [];
  const arrays: string[][] = ARRAY_FIELDS.map(() => []);
  for (const { entry: [entryId, flat], only: tasks } of entries) {
    ids.push(JSON.stringify(entryId));
    only.push(`"${tasks}"`);
    let event = 'null';
    let machine = 'null';
    const row = arrays.length;
    for (let a = 0; a < row; a++) arrays[a].push('[]');
    const at = ids.length - 1;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const name = flat[i];
      if (name === 'e') event = JSON.stringify(flat[i + 1]);
      else if (name === 'm') machine = JSON.stringify(flat[i + 1]);
      else {
        const field = FIELD_INDEX.get(name);
        // NOTE: an empty text is not JSON: it reads as none, as the decoder does.
        if (field !== undefined) arrays[field][at] = flat[i + 1] || '[]';
      }
    }
    events.push(event);
    machines.push(machine);
  }
  return [`[${ids.join(',')}]`, `[${events.join(',')}]`, `[${machines.join(',')}]`, `[${only.join(',')}]`, ...arrays.map((a) => `[${a.join(',')}]`)];
}
