import type { HistoryTableNames } from './pg-history.options';
import { upsertConflict } from './pg-history.sql';

/**
 * The stream entry fields holding one JSON array each (one element per task of the entry, see
 * scripts/includes/event-log.lua), in the order of the fold statement's parameters $5 to $14.
 */
export const ARRAY_FIELDS = ['ids', 't', 'a', 'due', 'd', 'b', 'k', 'err', 's', 'r'] as const;

/** The events that make a history row (an entry of any other event, such as `progress`, is skipped). */
const EVENTS = `'submitted', 'rescheduled', 'started', 'completed', 'retrying', 'dead', 'cancelled', 'recovered'`;

/** SQL: epoch ms (a bigint expression) as timestamptz, exactly. */
const ts = (ms: string): string => `timestamptz 'epoch' + ${ms} * interval '1 millisecond'`;
/**
 * SQL: the last non-null value of the bigint expression `x` among a task's live events: the greatest pair
 * [seq, x] (arrays compare element by element). NOTE: no sort per aggregate and group, as `array_agg(x
 * ORDER BY seq DESC)` does: that was the fold's largest cost (a tuplesort per column per task).
 */
const lastNum = (x: string): string => `(max(ARRAY[seq, ${x}]) FILTER (WHERE ${x} IS NOT NULL))[2]`;
/** SQL: the same for the text expression `x`: prefixed by its seq (20 digits), compared in byte order. */
const lastText = (x: string): string => `substr(max((lpad(seq::text, 20, '0') || ${x}) COLLATE "C") FILTER (WHERE ${x} IS NOT NULL), 21)`;
/** SQL: a JSON element's text when it is a JSON string, else NULL. */
const text = (x: string): string => `CASE WHEN json_typeof(${x}) = 'string' THEN ${x} #>> '{}' END`;

/**
 * One statement that folds a batch of raw stream entries into one row per task and upserts the rows: the
 * same rows foldHistoryEvents and upsertSql write from the decoded events (history-fold.spec and the
 * history e2e tests hold both to it), with the decoding and the folding done by PostgreSQL, so the writer's
 * process only passes the entries' texts through (no JSON parsed or built per task).
 *
 * Parameters, JSON arrays with one element per entry, in stream order: $1 entry ids, $2 events, $3 machines
 * (null for none), $4 which of its tasks to write ('' all, else a character per task, '1' for written: the
 * writer holds the others back), $5..$14 the ARRAY_FIELDS' raw arrays (`[]` when the entry has none). Then
 * $15 the stream's type (for entries that name none per task), $16 the stream's route partition (null for a
 * delay type's stream), $17 a JSON object of task id → log lines (for attempt ends), $18 a JSON object of
 * type → handler timeout (ms) covering every type of the batch.
 *
 * Per task, as history-fold.ts's step does: the events from its last `submitted` on (a reused id restarts
 * the row), the last event's status, time and entry, and for every other column the last value given.
 * NOTE: topic and id are sorted and grouped in the "C" collation (byte order: equality is the same as in any
 * deterministic collation, and the sort skips the locale's comparisons), once for the window and the
 * grouping both; the log lines are joined to the folded rows, not to every event.
 * A malformed entry (a field that is not a JSON array, a number that is not an integer) fails the statement
 * with a data exception (SQLSTATE class 22): the caller then writes the batch through the decoder, which
 * skips the malformed events one by one.
 */
export function foldUpsertSql(n: HistoryTableNames): string {
  const fields = ARRAY_FIELDS.map((_, i) => `json_array_elements($${i + 5}::json)`).join(', ');
  const elements = ARRAY_FIELDS.map((f) => (f === 'err' || f === 'b' || f === 'r' || f === 's' ? `json_array_elements(en.${f})` : `json_array_elements_text(en.${f})`)).join(', ');
  return `WITH en AS (
    SELECT * FROM ROWS FROM (json_array_elements_text($1::json), json_array_elements_text($2::json), json_array_elements_text($3::json),
      json_array_elements_text($4::json), ${fields})
      WITH ORDINALITY AS en(entry, event, machine, mask, ${ARRAY_FIELDS.join(', ')}, ord)
    WHERE en.event IN (${EVENTS})
  ), ev AS (
    SELECT en.ord * 4294967296 + x.ord AS seq, en.entry, en.event, coalesce(x.t, $15::text) COLLATE "C" AS topic, x.ids COLLATE "C" AS id,
      x.a::int AS attempt, x.due::bigint AS due, x.d::bigint AS delay, ${text('x.b')} AS body, x.k AS key,
      CASE WHEN json_typeof(x.err) = 'object' THEN jsonb_build_object('name', coalesce(x.err->>'name', 'Error'), 'message', coalesce(x.err->>'message', ''))
        || CASE WHEN json_typeof(x.err->'stack') = 'string' AND x.err->>'stack' <> '' THEN jsonb_build_object('stack', x.err->>'stack') ELSE '{}'::jsonb END END AS err,
      CASE WHEN json_typeof(x.s) = 'number' THEN nullif((x.s #>> '{}')::bigint, 0) END AS started_at, ${text('x.r')} AS result,
      nullif(en.machine, '') AS machine,
      CASE WHEN x.due IS NOT NULL AND x.d IS NOT NULL THEN x.due::bigint - x.d::bigint ELSE split_part(en.entry, '-', 1)::bigint END AS at
    FROM en CROSS JOIN LATERAL ROWS FROM (${elements}) WITH ORDINALITY AS x(${ARRAY_FIELDS.join(', ')}, ord)
    WHERE x.ids IS NOT NULL AND x.ids <> '' AND (en.mask = '' OR substr(en.mask, x.ord::int, 1) = '1')
  ), live AS (
    SELECT ev.*, max(seq) FILTER (WHERE event = 'submitted') OVER (PARTITION BY topic, id) AS restart
    FROM ev WHERE topic <> ''
  ), f AS (
    SELECT topic, id, bool_or(event = 'submitted') AS submitted,
      ${lastText('event')} AS last_event, ${lastNum('at')} AS updated, ${lastText('entry')} AS last_entry,
      (min(ARRAY[seq, at]))[2] AS created,
      ${lastNum('attempt')} AS attempt, ${lastNum('due')} AS due, ${lastNum('delay')} AS delay, ${lastText('body')} AS body,
      ${lastText('key')} AS key, (${lastText('err::text')})::jsonb AS err, ${lastText('result')} AS result,
      ${lastText('machine')} AS machine, ${lastNum(`coalesce(started_at, CASE WHEN event = 'started' THEN at END)`)} AS executed,
      bool_or(event IN ('completed', 'retrying', 'dead')) AS ended
    FROM live
    WHERE restart IS NULL OR seq >= restart
    GROUP BY topic, id
  )
  INSERT INTO ${n.history} AS h (topic, id, submitted, status, reentry, delay_ms, ttr_ms, body, ordering_key, partition,
    last_error, machine, result, logs, create_time, due_time, execution_time, finished_time, updated_time, last_entry, flow_id)
  SELECT f.topic, f.id, f.submitted,
    CASE f.last_event WHEN 'started' THEN 'running' WHEN 'retrying' THEN 'retrying' WHEN 'completed' THEN 'done'
      WHEN 'dead' THEN 'dead' WHEN 'cancelled' THEN 'cancelled' ELSE 'waiting' END,
    coalesce(f.attempt, CASE WHEN f.submitted THEN 0 END), f.delay, tt.ms::bigint, f.body, f.key, $16::int, f.err, f.machine,
    f.result, CASE WHEN f.ended THEN lg.lines END, ${ts('f.created')}, ${ts('f.due')}, ${ts('f.executed')},
    CASE WHEN f.last_event IN ('completed', 'dead', 'cancelled') THEN ${ts('f.updated')} END, ${ts('f.updated')}, f.last_entry,
    CASE WHEN left(f.id, 1) = '&' AND strpos(f.id, ':') > 2 THEN substr(f.id, 2, strpos(f.id, ':') - 2) END
  FROM f LEFT JOIN json_each_text($18::json) AS tt(type, ms) ON tt.type = f.topic
    LEFT JOIN json_each_text($17::json) AS lg(task, lines) ON lg.task = f.id
  ${upsertConflict()}`;
}
