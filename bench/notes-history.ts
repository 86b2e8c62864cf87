/** The notes on the history writer's cost (issue 34), in docs/benchmarks.md under issue 14's history item. */
export const HISTORY_NOTES = `- History on, the writer's cost (issue 34), with \`npm run bench:profile -- --events=history
  --producer-writer=no\`: the producer submits 50,000 tasks from its own process (the writer's flag up, so
  every submit is logged with its payload, as when the workers' application runs), then the workers'
  application (workers and the history writer in one process) runs them; its Node CPU counts until every
  row is in PostgreSQL. Three alternating rounds on 2026-11-28, the code before and after this change:

  | | before | after |
  | --- | --- | --- |
  | worker Node CPU per task, history off | 8.2 / 9.4 / 8.6 µs | 9.4 / 9.3 / 9.7 µs |
  | worker Node CPU per task, history on | 46.3 / 42.2 / 41.7 µs | 17.8 / 18.7 / 18.8 µs |
  | the writer's own (on − off) | about 34 µs | about 9 µs |
  | PostgreSQL CPU per task (its backends) | 25.6 / 26.6 / 25.6 µs | 31.8 / 32.8 / 29.8 µs |
  | processing time, history off → on | 0.60 → 1.10 s (55 %) | 0.67 → 0.87 s (77 %) |
  | every row written | 3.1–3.3 s | 2.6–2.7 s |

  The writer alone (\`bench/profile/history-writer.ts\`: the stream filled with 50,000 tasks' submits and
  completions, 601 entries, then an application that only writes the history, its CPU until every row is
  in PostgreSQL less its start-up's), three rounds each: before 31.4 / 33.1 / 33.5 µs of Node CPU per task
  (PostgreSQL 23.4 / 23.4 / 21.6 µs), after 5.5 / 6.3 / 6.2 µs (PostgreSQL 28.2 / 28.8 / 28.8 µs); on a
  later, busier hour, with the start-up measured in the same process, 6.9 / 7.3 / 8.2 µs.

  What changed: PostgreSQL now decodes and folds the stream entries (one statement per batch, each entry's
  JSON array fields passed through as they are), so the writer parses only task ids, to hold tasks back;
  PostgreSQL does the decoding the writer did (about 5 µs more per task). Where the writer's 9 µs go now
  (V8 profile): holding tasks back (a map of the tasks submitted in the window) about 1.5 µs, parsing ids
  1 µs, pg serialising the parameters and ioredis reading the entries about 2 µs, garbage collection about
  2 µs, and 3 µs of system time (the large buffers). NOT MET: the issue's 4 µs. Tried without gain: smaller
  statements (1 MB and 256 KB of entries instead of 8 MB: PostgreSQL's CPU per task doubled, a task's
  submit and end falling into different statements); reading the entries as bytes and passing them to pg as
  binary parameters (no decoding into strings and back: the writer alone 7.1–8.9 µs against 5.5–6.3, the
  copies of the Buffers cost more than the strings' conversions); writing a submit's held tasks together,
  once all have ended, so that the submit entry is sent once (8.5–9.2 µs with the bytes, no better).

  PostgreSQL's side, statement by statement (\`bench/profile/fold-explain.ts\`: the fold of one batch as the
  immediate workload writes it, 20,000 tasks in 40 submit entries of 500 and 200 completion entries of 100, on
  a fresh table; EXPLAIN ANALYZE, then the statement alone, 2026-11-29): 18–21 µs a task, of which reading the
  entries' JSON arrays about 1.7 µs, the sort by type and id 2.6 (an external merge of 5 MB at the default
  \`work_mem\`), the window that finds a reused id's restart 2.1, the per-column aggregates 3.8, the joins
  of timeouts and log lines 1.5, and the insert itself (the row, its primary key, the status and finished
  indexes, the conflict check) about 7. Raising \`work_mem\` to 64 MB (an in-memory sort) changed nothing
  measurable (four alternating runs: 18–24 µs either way). The rest of the 30 µs a task the benchmark
  measures is the commit, the WAL and the rows updated rather than inserted (a task whose submit and end
  fall into different batches).
`;
