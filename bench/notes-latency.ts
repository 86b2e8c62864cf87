/** The notes on where issue 34's remaining tails come from (low load, delayed lateness, memory), after the cost notes. */
export const LATENCY_NOTES = `## Issue 34: where the remaining tails come from (2026-11-28, night)

**A young-generation pathology, found and fixed (61760ca).** \`bench/profile/awaited.ts\` cuts workload 16b in two:
the call to the handler's start, the handler's end to the result back. The tail was in the first half, and in
the slow round trips a single \`EVALSHA\` on an idle Redis took 2–6 ms to answer. \`--trace-gc\` showed why: each
young-generation collection (scavenge) of this process paused it 3–8 ms (BullMQ's, in the same harness, 1.3),
because 0.5 MB survived each one (BullMQ's: 25 KB). With \`--no-allocation-site-pretenuring\` they were 8 KB and
1 ms. V8 had decided, a few hundred round trips in, that the argument list of a script call (an array literal
grown by \`push\`) lives long, and allocated every later one in the old generation; \`%InYoungGeneration\`
confirmed it for all 6,000 of them. Each list dies within the call, but an old dead object keeps what it points
to (the call's young strings: keys, ids, payloads) alive through every scavenge until the next full collection.
The list is now made at its length (\`new Array(n)\`), which V8 keeps young: 4–15 KB survive a scavenge, pauses
0.8–1.4 ms. \`test/young-calls\` asks V8 after 3,000 round trips. The same scripts' lists under bulk submits
(4 × 1,000 tasks a call) were young before and after.
- 16b in \`bench/profile/awaited.ts\` (3,000 round trips after 1,000), alternating runs: p99 3.5 / 2.9 / 3.0 ms
  before, 2.8 / 2.4 / 2.6 after. BullMQ in the same harness, alternating with the fixed library: 2.4 / 2.3 /
  2.5 against 2.9 / 2.6 / 2.7. **The 2 ms target is still not met.**
- Single submits, 100 in flight (\`npm run bench:profile:submits\`, 40,000 calls, each due in a minute): plain
  31,195–34,285 a second at 20.6–22.7 µs of Node CPU a call (before the fix, 20,000 calls: 24,431–29,029 at
  25.8–26.3 µs), dedupe \`drop\` 39,176–45,823 (before: 34,113); BullMQ plain 32,498–35,921 at 23.7–28.0 µs,
  \`drop\` 35,733–37,938.

**What is left of 16b's tail: compiling.** With 5,000 warm-up round trips instead of 1,000 the p99 is 1.1 ms.
During the 3,000 measured ones after 1,000, \`--trace-opt --trace-deopt\` counted 106 functions optimised and 25
deoptimised ("wrong map", "insufficient type feedback": \`onMessage\`, \`pump\`, \`settle\`, Node's stream and
timer internals); the optimising compiler runs beside the main thread, and on two cores it takes one from this
process or from Redis. A service at low load has long compiled its path; the benchmark keeps 1,000 warm-up round
trips for both systems, as workload 7 does.

**Delayed lateness: the machine's own periodic work.** \`bench/profile/lateness.ts\` runs workload 2 on this
library alone and says when the late starts fell due. Besides the tasks due during the 20,000-task submit
(which this process is encoding and Redis running meanwhile), tasks more than 3 ms late come in clusters of
10–30 every 500 ms, all through the 10 s. An event-loop probe saw gaps of 4–12 ms at the same period, and
\`perf sched record -a\` over a run named the other side: \`kdamond.0\`, the kernel's DAMON memory monitor, wakes
every 512 ms and runs 2–13 ms (once 38 ms), \`kcompactd0\` right after it; an MQTT broker (\`mosquitto\`) on this
machine wakes every 100 ms and sometimes runs 5–33 ms. On two cores, one of them busy elsewhere leaves Node and
Redis one core between them. A p99 over all tasks of 3 ms or less asks that fewer than 1 % be 4 ms late; the
submit window alone holds about 1.3 % of the tasks in the benchmark, and these clusters add 1.2–1.8 % (three
runs of the profile). Not a cost of this library's path: BullMQ and bee-queue run under the same clusters,
their own lateness hundreds of ms.

**Throughput workloads spend ~15 % of the worker's time in scavenges, BullMQ's alike.** \`WORKER_FLAGS=--trace-gc-nvp
npm run bench:profile\` (100,000 immediate tasks): a scavenge every 40–55 ms, 5–9 ms each, 1.7 MB promoted each
time (about 15 % of what was allocated; with a young generation four times as large, 15 % still). Not the
pretenuring above (the same with \`--no-allocation-site-pretenuring\`), and not objects that stay alive (a heap
snapshot in the middle of the run holds 20 kB more than at its end). BullMQ's worker, 50,000 jobs in the same
way: 1.1–1.2 MB promoted a scavenge, 7.5–12 ms pauses. Left as it is.

**Memory with groups and priorities (≤ 191 bytes): the arithmetic.** A plain pending task is 191 bytes: its
record (the sequence tag and a ~100-byte payload: 111 bytes with Redis's string header, in jemalloc's 112-byte
class) with its hash entry, and about 20 bytes in the waiting set's chunks. A priority needs the record's long
form (\`~attempts:seq:due:flags:\`, about 20 bytes more): 131 bytes, in the 160-byte class, +48 (measured +43).
A group is an entry of the \`gof\` hash beside the record (+66). Both in the record, as a short priority mark and
the group's name, would be about 125 bytes, the 128-byte class: about 207 bytes a task. Under 191 only if the
record stays in the 112-byte class, i.e. a group named by a small number (a registry of the type's groups) and
a one-character priority mark, for payloads of this size: a new record format in the hot-path scripts and every
reader of records. Done for priorities (2026-11-29): a delayed task with a priority keeps the short record, its
priority a mark before the sequence tag (one letter for 1 to 26, else 3 to 5 characters), and takes the long form
only as it falls due (the reserve moves it into the turn queue or its group's queue and rewrites its record in the
same script; a due task's score is its turn, so its record keeps its due time). A priority costs a pending task 1
byte instead of about 20: with this workload's payload the record stays in the 112-byte class, and
\`memory-options\` measures 191 bytes a task with priorities (234 before), 260 with groups and both (300 before).
What a priority costs in other payload sizes is that byte, plus 16 whenever it crosses a size class (one payload
size in 16). Groups are still the \`gof\` entry: NOT MET with groups.

**History: PostgreSQL's side of a row (2026-11-29).** In the issue's setup PostgreSQL shares the two cores
with Redis and the workers, and its CPU per row (35–49 µs a task here, the writer's own Node CPU 3.3–4.2 µs
alone) is what takes the history-on rate below 80 % of off. EXPLAIN ANALYZE of the fold statement over a batch
of 2,000 tasks (submit and completion entries of 100 tasks; a busy machine, minima of five): decoding the
entries' JSON arrays about 4–8 ms, the sort by task and the window that finds a reused id's restart about
6–10 ms, the grouping about 17 ms, the upsert about 16–20 ms (8–10 µs a row; the same without \`ON CONFLICT\`;
dropping the two secondary indexes or making the table unlogged moved the whole by 5 % or less). Changed:
the sort in byte order ("C" collation, one sort serving the window and the grouping), the log lines joined to
the folded rows, and each column's last value taken as the greatest [seq, value] pair instead of
\`array_agg(... ORDER BY seq DESC)\`, which sorted per column per task (the grouping 33 → 17.5 ms; the select
part's minima 40–46 → 29–32 ms in two of three alternating pairs). Tried without gain: folding the restart
into the grouping (no window; slower here). PostgreSQL's CPU per row, measured from its backend's
\`/proc\` figures, moves by ±15 % between runs on this machine; no figure of the issue's ratio was taken again.
`;
