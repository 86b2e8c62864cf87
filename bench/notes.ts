import { HISTORY_NOTES } from './notes-history';

/** What docs/benchmarks.md says under the table: how to read each workload, and what limits it. */
export const NOTES = `## Issue 14's targets

Three full runs on 2026-11-24 of the code as it stands, on a quieter machine than the runs of 2026-11-23
quoted below (Redis's own EVALSHA ceiling 873,000–917,000 calls/s against 580,000–650,000 then, BullMQ's
immediate rate 27,500–29,400 tasks/s against 19,000–20,400): every target met in every run.

| target | asked | the three runs |
| --- | --- | --- |
| immediate, events and metrics on | ≥ 5× BullMQ | 5.14 / 5.18 / 5.04× (off 6.57 / 6.21 / 6.38×) |
| Node CPU per task | half of 2.7 s per 50,000 | 0.4 s on, 0.2–0.3 s off (BullMQ 2.6–2.7 s) |
| delayed lateness p99, all / due after submit | ≤ 5 / ≤ 3 ms, 0 early | 1 / 1, 1 / 1, 2 / 1 ms, 0 early |
| round trip p99 | ≤ 2 ms | 0.4 / 0.4 / 0.4 ms (BullMQ 2.3 / 3.3 / 3.7); warm-up 1.3 / 1.3 / 1.0 |
| ordered, route worker at concurrency 50 | ≥ 30× BullMQ at 1, 0 violations | 37.3 / 34.5 / 38.5×, 0 violations |
| memory per pending delayed task | ≤ 220 bytes | 191 / 192 / 191 (BullMQ 856 / 823 / 824) |
| scale-out, commands per master | each a third ± 15 % | 33 / 33 / 33 % in each run; throughput 109 / 109 / 96 % of one server |
| route partitions per master (12) | ≤ ⌈12/3⌉ + 1 = 5 | 4 / 4 / 4 in each run |
| history on | ≥ 70 % of off | 90 / 99 / 89 % |
| service-mode lateness p99 | reported | 29 / 36 / 49 ms (plugin mode 1 / 1 / 2) |
| Redis ceiling beside the per-task cost | reported | 8.0 µs of Redis per task = 7.0–7.3 EVALSHA of \`return 1\` |

On a busier machine (2026-11-23, below) the immediate ratio with events on and the round trip were at the
edge: the earlier runs are kept below, with what limited each figure.

## Reading the figures

- Immediate: this library spends about 10 times less CPU than BullMQ in Node and 5 times less in Redis
  (events off; 1.3 Redis commands per task against 37: a worker acks the tasks it finished and reserves the next ones in one
  script call, for its free slots and, while its handlers are quick, as many again, with two such calls
  in flight). The fetch keeps its reply for a
  repeat (one key per worker lane), so a command re-sent after a reconnect reserves nothing twice.
  - Issue 14 asks for 5× BullMQ with events and metrics on (off reported too), Node's CPU per task halved.
    Three full runs on 2026-11-23 after this round's changes: off 5.57 / 4.31 / 5.61× (median 5.57×), on
    4.46 / 4.07 / 3.69× (median 4.07×); a full run just before the last change below gave 5.68× and 4.35×.
    Three more after the stream reads moved to their own connection, two of them on a busier machine
    (BullMQ 20,400 then 13,900 and 14,500 tasks/s): off 5.28 / 6.83 / 4.52× (median 5.28×), on 4.30 /
    4.68 / 3.65× (median 4.30×). Three more after the waiting set moved into chunks (see Memory), on a
    machine busier still (Redis's own EVALSHA ceiling 390,000–610,000 calls/s against 650,000): off 5.23 /
    5.48 / 4.69×, on 3.29 / 4.37 / 3.53×. Three more after the worker began reserving ahead of free slots
    (below): off 5.99 / 5.99 / 4.32×, on 4.85 / 4.60 / 3.62× (medians 5.99× and 4.60×), 1.6 Redis
    commands per task. Three with the final code (takes of 100): off 6.38 / 6.29 / 6.58×, on 5.15 / 5.52 /
    5.51× (medians 6.38× and 5.51×), 1.3 commands per task. Both met. Earlier the same day: 2.90× off and 2.06× on (medians of 3). Node's CPU for the
    whole workload (submit included) went from 2.7 s when the issue was filed to 0.5 s (off).
  - What was wrong: only one take was ever in flight. A take went out when the tasks of the previous one
    had finished, and with handlers that finish at once (this workload's) nothing sent the second take the
    design allows, so Redis and the worker waited on each other in turn (a profile had the worker's main
    thread idle 59 % of the time while Redis was 42 % busy). A take that finds more due tasks than it
    reserved now lets the next one go out at once: \`npm run bench:profile\` (the worker alone) 47–56k →
    65–77k tasks/s with events off. The unit test that shows it counts the takes in flight.
  - A handler declared without the signal (\`handle(task)\`, as most are) no longer gets an AbortController
    per task: worker CPU 11–13 → 8–9 µs per task in \`bench:profile\`. A handler that declares it, reads
    \`arguments\` or has a rest parameter still gets one; timeouts and cancels fail the attempt either way.
  - What bounds it now: both processes are busy. Redis spends 8–10 µs per task (the take script: about a
    third in data-structure commands, as a reservation is written to a sorted set and a hash and removed
    from both, the rest Lua and argument conversion) and the worker 8–9 µs, on two cores shared with the
    kernel's loopback work: about 110,000–125,000 tasks/s at best here, which the best runs reach.
  - Reserving ahead: a take costs the worker a socket write, a reply to parse and a turn of the event loop
    whatever its size, and with handlers that take microseconds that is most of a task's cost:
    \`bench:profile\` at concurrency 200 (takes of 100) ran 58–89k tasks/s (median 84k) against 50–62k at 50
    (takes of 25), in alternating runs. So a worker whose handlers are quick now reserves more tasks than it has
    slots, started as slots free (\`PrefetchAllowance\`: the allowance shrinks as handlers slow, so that a
    task reserved ahead waits about 2 ms; none until a handler has finished). Allowing \`concurrency\`
    more (takes of 50): five alternating \`bench:profile\` rounds with events and metrics on gave 73.3k
    against 57.2k tasks/s (median; faster in 5 of 5), worker CPU 10–11 against 13–15 µs per task.
    Allowing three times \`concurrency\` (takes of 100): 95.8k against 74.5k (5 of 5), Redis 7.5 against
    8.9 µs per task. A take of 100 holds Redis about 0.75 ms. Concurrency still bounds the handlers running at once, and tasks reserved
    ahead go back to Redis for other workers when no slot frees for 100 ms (hanging handlers).
  - The take script itself: the reservation token is now concatenated from one stamp per call (Redis's
    time in microseconds) instead of \`string.format\` per task, and the reply carries that stamp once
    instead of a token per task: 12.8 → 10.3 µs of Redis per task for the take alone (12 alternating
    rounds of 5,000 tasks, completions not logged; 14.0 → 11.1 logged).
  - With this fix, 3 takes in flight (of 17 each) are slower than 2 of 25: 58–61k against 65–77k tasks/s.
    Tried without gain earlier: a synchronous success path in the consumer (no promise per task).
- Events and metrics: "on" is what an application watching its queues runs: the event streams (one XADD
  per fetch's batch of acks, in the same script), a listener of every local event, a fleet listener of the
  type's completions (every completion read back from the stream by every instance that listens) and
  Prometheus metrics (plain per-type numbers read by prom-client at scrape time); "off" sets
  \`events: { stream: false }\` and no metrics. The two alternate, twice each after a warm-up, and the better
  run of each is shown: a single pair moves by ±10 % with the order it ran in. Other workloads run with the
  defaults (streams on). On 2026-11-23, after this round: on at 80 / 94 / 66 % of off, then 81 / 69 / 81 %;
  with the worker reserving ahead 81 / 77 / 84 %; with the final code 81 / 88 / 84 %. In a profile of that code, the fleet listener's decoding
  (JSON of each entry's ids and attempts, an event object per task) is the largest part of the difference:
  about 0.5 µs per task in \`JSON.parse\` alone.
  - Where it goes (single immediate-only runs, one part on at a time): metrics alone 99 % of off, the local
    listener alone 86 %, the fleet listener alone 72 %. The fleet listener is the cost: it has the scripts
    log every completion (0.6 → 0.3 µs of Lua per task after this round's change: attempts logged as the
    text one pattern match captures, not converted and JSON-encoded), and the worker reads each back and
    delivers it (about 0.3 µs per task decoded and dispatched, measured alone). A driver alternating the
    settings 4 times in one process put on at about 85 % of off (medians 91,600 and 104,300 tasks/s).
  - Stream reads now go over a connection of their own: a read of hundreds of entries held up the takes
    queued behind it on the commands connection. Six alternating rounds in one process, with the fleet
    listener: median 85,500 → 92,600 tasks/s (5 of 6 rounds faster).
  - Tried without a clear gain: reading the followed stream 50 or 100 entries at a time instead of 500, or
    every 20 ms instead of 200; splitting an entry's list of ids instead of \`JSON.parse\` (five
    alternating rounds: 72.8k against 75.2k tasks/s, within the noise).
- History on: the same workload with the task history copied into PostgreSQL (the machine's PostgreSQL 15,
  a schema of its own) by a writer in the same process, default options. Three full runs on 2026-11-22:
  69 / 70 / 80 % of off, median 70 %; three on 2026-11-23 before this round's changes 55 / 59 / 71 %
  (median 59 %); three after them 78 / 57 / 82 % (median 78 %), and three more (two on a busier machine,
  see the immediate figures) 89 / 55 / 63 % (median 63 %), and three after the waiting set moved into
  chunks 91 / 59 / 88 % (median 88 %): over these nine runs a median of 78 %, above the issue's 70 %.
  With the worker reserving ahead: 90 / 54 / 119 % (median 90 %); with the final code 117 / 100 / 91 %
  (median 100 %). Met, though a single run can fall to 55 %. The history's own work did not change; why the ratio rose with the
  worker's changes is not measured. Single runs vary by ±15 % and more.
  What it costs: PostgreSQL about 16 µs per row written, Node about
  6 µs per task (reading the stream, folding, the JSON record set), Redis the payloads logged at submit,
  all on the same two cores. What brought it from 60 % to here: a task that ends within \`coalesceMs\`
  (5 s) of its submit is written once, finished (one row version instead of two), and the record set is
  read as json rather than jsonb. With \`recordStarts\` (rows show running) it costs about a tenth more.
  Tried without gain: COPY into a staging table (the insert itself dominates), a plain UPDATE for rows
  known to exist.
${HISTORY_NOTES}- Delayed: workers sleep until the next due time that the fetch script returns and are woken when an
  earlier task arrives, so lateness is a timer's; BullMQ's p99 over all tasks includes the backlog it
  builds while the tasks are being added. Tasks due at the same millisecond start in submission order.
  Three full runs on 2026-11-22: p99 3 / 2 / 2 ms over all tasks and 2 / 1 / 1 ms for tasks due after
  submitting, 0 early (issue 14's target: 5 and 3 ms). It was 5 / 4 before the take left ioredis's
  auto-pipeline (one turn of the event loop less between a wake-up and the take). On 2026-11-23: 3 / 4 / 3
  and 2 / 2 / 2 ms; after this round's changes 4 / 3 / 3 and 2 / 2 / 2 ms, then 2 / 4 / 4 and 2 / 2 / 2 ms;
  with the chunked waiting set 3 / 5 / 2 and 1 / 2 / 1 ms; with the worker reserving ahead 2 / 3 / 3 and
  1 / 2 / 1 ms (a task is reserved ahead only when more are due than slots are free); with the final code
  4 / 2 / 2 and 2 / 1 / 1 ms.
- Service mode: the same delayed tasks run by the scheduler (\`apps/scheduler\`, its own process) and
  delivered over HTTP to two instances of a client application (each its own process), timed where the
  handler starts. The hop costs a take in the scheduler, one signed request per instance per batch of tasks
  due together (up to 100), the instance's verification (HMAC, a \`SET NX\` against replays) and its
  streamed answer; with four Node processes and Redis on two cores, CPU is what adds the lateness. One
  request per task (before batching) gave p99 776 ms at 1,700 tasks/s in a quick run: the processes could
  not keep up.
- Ordered: two processes, each ordered worker at \`concurrency: 50\` (issue 14's setting). Order is judged by
  the time each task first started. The time runs from the first submit to the last start, so it holds
  the submits too, and the CPU column says where the time went: the four processes (two workers, the
  producer, Redis) keep both cores busy, so CPU per task is what sets the rate.
  - Issue 14 asks for 30×. Before this round: 24 / 26 / 30×. Three full runs after the changes below:
    27.5 / 28.2 / 33.8× (median 28.2×); with the shared timeouts added after them, three ordered-only
    runs gave 31.9 / 30.7 / 27.4× (median 30.7×). Three full runs on 2026-11-23: 31.9 / 30.5 / 26.6×
    (median 30.5×). After this round's changes (no AbortController for a handler that does not declare the
    signal, as the benchmark's), three full runs gave 37.1 / 26.6 / 31.5× (median 31.5×), three more
    31.5 / 30.1 / 30.9× (median 30.9×), three ordered-only runs 30.7 / 32.2 / 31.1×, and three full runs
    with the chunked waiting set 34.0 / 31.1 / 31.7×, and three with the delay worker reserving ahead
    (the ordered engine unchanged) 32.9 / 33.7 / 35.7×, and with the final code 26.6 / 33.3 / 36.4×
    (median 33.3×). Met, if not by much.
  - What brought it there (each measured with the CPU column): acks wait up to 5 ms while their batch runs
    instead of one call per few tasks, and the last ones go out just ahead of the next take on the same
    connection (one round trip for both; a failed ack voids that take's reply); one abort listener per
    signal in the slot queue instead of one per wait; attempts settle directly when aborted instead of
    through a listener; one timer per group of attempts started within 1 ms instead of one per attempt;
    ordered task ids drawn from a pool of random bytes (one \`randomBytes\` call per id was a quarter of an
    ordered submit's CPU: 8.4 → 5.3 µs). Workers' CPU went from about 0.75 to 0.5 s for the 20,000 tasks.
  BullMQ is only order-safe at concurrency 1. At concurrency 50 it saw no violations here because a key's
  tasks are 500 jobs apart in its queue; that is luck of the workload, not a guarantee.
- Memory: 191–194 bytes per pending task (was 272–276): issue 14's target of 220 is met. A pending task is one
  hash entry (its record: the payload behind a short sequence tag) and one member of the waiting set.
  Redis's own cost of the hash entry, with jemalloc's size classes: the entry 32 + its id 16 + the record
  (~107 bytes of tag and payload) 112 + its share of the bucket array ~10, about 170. The waiting set was
  one sorted set, 112 bytes per member (skip-list node, dict entry, member, buckets). It is now kept in
  chunks: the tasks whose sequence number falls in one block of 128 share a sorted set, which Redis keeps
  as a listpack (at most 128 members of at most 64 bytes, the stock limits): about 20 bytes per task, plus
  an index of the chunks by their earliest due time (a sorted set of one entry per chunk) and a count.
  A task never changes chunk, so chunks never split. A take merges the chunks: the chunk with the earliest
  head gives the tasks due before the next chunk's head, in (due time, submission) order as before.
  - What it costs: tasks submitted in due order (every workload here) come from one chunk per step, so a
    take of 50 adds about four Redis calls (the index's head, the chunk's new head, the index entry, the
    count): 1.8 → 2.0 commands per task on the immediate workload. Alternating runs of the code before
    and after in one session showed no throughput difference beyond the noise (events off 91.7k / 68.2k
    before, 83.3k / 96.4k after). Due times that interleave across chunks (random delays) take one step
    per few tasks; the lateness workload, whose delays are random, stayed at p99 3 ms.
  - Limits: a member (sequence tag and id) longer than 64 bytes, e.g. a long caller-chosen id, turns its
    chunk into an ordinary sorted set: correct, just not compact. Counting ready tasks costs one ZCOUNT
    per chunk holding ready tasks; a page of delayed or ready tasks reads chunks until the page is
    complete. Queues written by earlier versions (one sorted set) are moved into chunks by takes, up to
    1,000 tasks per take.
  - Not the hash: small hashes of many tasks each (listpack) would save ~50 bytes more per task, but stock
    Redis keeps a hash in listpack only while every value is at most 64 bytes (\`hash-max-listpack-value\`),
    and these records are ~107.
- Memory with priorities and groups (issue 34's target: at most 191 bytes per pending task with both in
  use), \`bench/profile/memory-options.ts\` (100,000 tasks an hour away, each variant on a fresh server,
  2026-11-28): plain 191, with priorities (10 levels) 234, with groups (100 tenants) 257, with both 300
  bytes per task. 2026-11-29, with a delayed task's priority as a one-letter mark in its short record (see
  the arithmetic below): plain 191, priorities 191, groups 260, both 260. NOT MET with groups.
- Round trip: one immediate task at a time, timed from the submit call to the handler's start in the same
  process (producer and worker together, for both systems): 2,000 round trips after 1,000 warm-up ones,
  whose own figures (from the 51st) are shown beside them. The path is the submit script, its wake-up
  message on the type's channel, a take, the handler. Issue 14 asks for a p99 of 2 ms: 0.4 / 0.4 / 0.4 ms
  in the three runs of 2026-11-24 against BullMQ's 2.3 / 3.3 / 3.7 (p50 0.2 against 0.3).
  - Why 1,000 warm-up round trips (50 until 2026-11-24): a process that has just started spends its first
    few thousand round trips compiling the path, and on two cores that, not the path, made the tail. With
    \`perf sched\` recording the whole machine during a standalone run, V8's helper threads (its optimising
    compiler, which runs beside the main thread) ran about 200 ms in the ~600 ms of 2,000 round trips, up
    to 4.8 ms at a stretch, while redis-server waited to run for as long; Redis's own latency histogram put
    all but one of its 4,100 EVALSHA calls under 0.53 ms. \`--trace-opt\` counted 88 functions optimised
    during the measured 2,000 after 300 warm-up round trips, 37 after 3,000, 31 after 6,000 (mostly Node's
    stream and timer internals, optimised again after type feedback changed). Four alternating standalone
    runs: p99 1.9 / 1.0 / 1.6 / 2.2 ms after 50 warm-up round trips, 0.5 / 1.4 / 0.6 / 0.4 after 1,000
    (BullMQ 2.8 / 2.0 / 2.5 / 2.5 and 1.9 / 2.1 / 1.9 / 1.7). A service at low load has long compiled its
    path; the warm-up column shows the first thousand.
  - Before: with 50 warm-up round trips, three full runs on 2026-11-23 gave p99 1.7 / 1.2 / 1.5 ms against
    BullMQ's 5.2 / 4.1 / 3.9; later ones that day, on a busier machine, 1.9 / 1.7 / 1.7, 2.6 / 2.2 / 1.4,
    1.6 / 1.6 / 2.3, 1.9 / 2.9 / 1.6 and 1.6 / 3.4 / 2.1 ms (BullMQ 2.9–5.1): at the edge of the target.
  - Garbage: ioredis's \`defineCommand\` puts each script on the client's script set, and every
    auto-pipeline it builds copies that whole set onto itself (two properties per script: ~19 KB with this
    library's 45 scripts). At low load every command builds its own pipeline. A sampling heap profile put
    a round trip at 73 KB allocated, and the young-generation collections it caused (12 per 2,000 round
    trips, 2–5 ms each on these cores) were in a quarter of the slow ones. The scripts are now sent by the
    library (\`LuaScript\`: EVAL with the body on a connection's first call, EVALSHA after, EVAL again on
    NOSCRIPT, as ioredis does) and written into one buffer each instead of five strings per argument: 39
    KB per round trip, 5 collections (28 KB and 4 on 2026-11-24, the benchmark's own share included).
    Only the route runner's ack and take stay ioredis commands: they must be re-sent together and in order
    after a cluster reconnect, which ioredis's pipelines do.
  - One call fewer: a worker's finished tasks wait up to 5 ms for the next take to carry their acks, so a
    round trip at low load is a submit and a take (it was a submit, an ack and a take): p50 0.45 → 0.36 ms
    in a standalone run.
  - What is left in the tail (the max, 4–5 ms in every run, and BullMQ's p99): the same competition for
    the two cores, by V8's collector and compiler threads, the kernel's loopback work and the machine's
    other services; a core of Redis's own would remove most of it.
- Redis ceiling: what this Redis on this machine does with nothing but EVALSHA of \`return 1\`, 16 per
  pipeline, 50 connections (\`redis-benchmark\`). Beside it, the Redis CPU time per task of the immediate
  workload (events and metrics off): how many such calls a task costs, so how close to Redis's own limit
  the library runs.
- Scale-out: a real 3-master cluster started here (no replicas) against a single server, one application
  running three types at concurrency 50 each. A type lives in one slot, so the names are chosen to put each
  type on its own master; the commands then split in thirds. The throughput stays that of one server
  because one Node process runs all three types and is the bound here (and the three masters share the
  same two cores): 64–98 % of the single server's rate over three runs, down from 100–118 %; 67 / 73 / 73 %
  on 2026-11-23, and 87 / 112 / 86 % then 100 / 106 / 102 % after this round's changes (the cluster at
  69,000–101,100 tasks/s, the single server 70,700–114,600), 81 / 92 / 119 % with the chunked waiting
  set, 82 / 91 / 78 % with the worker reserving ahead, and 94 / 104 / 100 % with the final code (the
  cluster at 121,100–138,300 tasks/s). Both rose
  when the take left the auto-pipeline, the single server more: two alternating runs of the code before
  and after gave the cluster 62,900 → 76,300 and 49,400 → 54,900 tasks/s, the single server 60,100 →
  98,800 and 48,500 → 82,700 (why the cluster gained less is not measured; its three Redis processes share
  the two cores with Node). Route partitions: the queue is
  created on the cluster and the cluster is asked where each partition's record lives. Each partition's
  hash tag carries the first suffix that puts its slot in the middle of the partition's share of the slot
  space (base-3 van der Corput, so partition p goes to the third p mod 3): 4 / 4 / 4 for 12 partitions in
  every run (it was 3 / 6 / 3 with plain tags). Queues created by earlier versions keep their plain tags.
- The machine is shared: the same code measures up to ±30 % apart from run to run; compare ratios from one
  run, and several runs before drawing a conclusion.

## Workloads 10 to 13

The table above is the full run of 2026-11-24; workloads 10 to 13 came after it. Their figures below are from
quick runs (\`npm run bench -- --only=<name> --quick\`) on the same 2-core machine, on 2026-11-27 unless
said otherwise.

- 10. Durability (\`bench/durability.ts\`): what \`durability: { replicas: 1, timeoutMs: 1000 }\` costs, on a
  master and one replica of its own started on this machine (no replication lag: what \`WAIT\` itself costs).
  The same two loads with and without the option: 32 loops each submitting one delayed task per call for
  3 s (8 s in a full run), and a backlog of 10,000 (30,000) ready tasks run by one worker at concurrency 50,
  its acks durable too, timed from the worker's start. README: about 63 % of the submits per second
  without it (p50 2.2 against 1.3 ms). One quick run: 17,888 against 25,035 submits/s (71 %), p50 1.6
  against 1.1 ms; the backlog 79,957 against 67,447 tasks/s (119 %: a quick backlog lasts about 150 ms,
  so one run says little beyond "no visible cost").
- 11. Rate-limited (\`bench/limits.ts\`): a fleet of three worker applications (BullMQ: three \`Worker\`s on
  their own connections), concurrency 50 each, under a limit of 1,000 starts per second for the whole
  fleet (this library: \`rateLimit: { max: 1000, perMs: 1000 }\`, GCRA with the default burst of 20; BullMQ:
  \`limiter: { max: 1000, duration: 1000 }\`, a fixed window), 5,000 ready tasks (20,000) submitted once the
  workers run. Figures: starts per second from the first to the last, against the limit, and the busiest
  sliding 1 s window of the handlers' start times (GCRA allows max + burst = 1,020 on Redis's clock; the
  start times are Node's, a few ms later). README: 100.5 % with the busiest window at 1,025, BullMQ 121.5 %
  and 1,997 (a fixed window lets up to twice the limit through around a window's edge). One quick run:
  100.4 % and 1,021, BullMQ 122.5 % and 1,997.
- 12. Fleet-wide concurrency (\`bench/limits.ts\`): the same fleet of three under \`globalConcurrency: 10\`
  (BullMQ: \`queue.setGlobalConcurrency(10)\`), handlers that hold 20 ms, 2,000 tasks (10,000): the most
  handlers running at once in the fleet (at most 10 is the promise), and the throughput against the ideal
  10 / 20 ms = 500 tasks/s. README: 94 % (BullMQ 92 %). One quick run: 95 % (BullMQ 94 %), never more than
  10 at once in either.
- 13. Prioritized (\`bench/priorities.ts\`, issue 28): 10,000 tasks (50,000 in a full run) over priorities
  1 to 10, interleaved (submission i has priority 1 + i mod 10; ~100-byte payloads carrying i and the
  priority), all submitted before any worker runs, one batch of 1,000 at a time (this library \`submitMany\`
  with \`priority\`; BullMQ \`addBulk\` with \`opts.priority\`, 1 the highest, FIFO within one), so that
  submission order is index order. Then one worker at concurrency 50 with an empty handler. Throughput:
  from the worker's start (\`startQueueApp\` or \`new Worker\`, start-up included) to the last handler start,
  which is the issue's measure, and from the first handler start (as workload 1 counts). A pass of 2,000
  on each system runs first and is not reported. Order, over the handler starts in the order they happened:
  an **inversion** is a start of priority p with a start of a more urgent priority more than 50 (the
  concurrency) starts later; a **FIFO violation** is a start with a start of the same priority that was
  submitted earlier more than 50 starts later; "slack needed" is the largest such distance, what the
  allowance would have to be for the count to be 0.

  | run | this library tasks/s (from first start) | BullMQ tasks/s (from first start) | ratio (from first start) | inversions, FIFO violations, slack needed (both systems) |
  | --- | --- | --- | --- | --- |
  | quick 1 | 34,690 (63,402) | 16,035 (16,446) | 2.16× (3.86×) | 0, 0, 0 |
  | quick 2 | 35,872 (63,591) | 12,925 (13,293) | 2.78× (4.78×) | 0, 0, 0 |
  | quick 3 | 34,874 (60,761) | 16,605 (17,097) | 2.10× (3.55×) | 0, 0, 0 |
  | quick 4 | 33,613 (57,063) | 17,271 (17,838) | 1.95× (3.20×) | 0, 0, 0 |
  | full 1 (50,000) | 43,982 (76,048) | 18,807 (18,909) | 2.34× (4.02×) | 0, 0, 0 |
  | full 2 (50,000) | 42,058 (75,706) | 17,905 (18,022) | 2.35× (4.20×) | 0, 0, 0 |

  - The issue's target, ≥ 5× BullMQ's prioritized queue, is **not met**: 2.0–2.8× from the worker's start
    (3.2–4.8× from the first start). Order is: 0 inversions and 0 FIFO violations in every run, for both,
    with no slack used at all (every task started in exact turn order). The worker reserves ahead (takes of
    up to 100 at concurrency 50), but here every task waits before it starts, so what it reserves is
    already in turn order. Not measured by this workload: a more urgent task submitted while a worker
    holds tasks reserved ahead starts after those (at most what that worker holds).
  - Cost per task: BullMQ 30 Redis commands per task (29.8 on the quick runs), this library 4.9 (1.3 without
    priorities, workload 1); Node CPU for the 50,000: 0.4 s against BullMQ's 2.0–2.1 s, Redis CPU 1.0–1.1 s
    against 2.5–2.6 s.
  - Where the time goes (50,000 tasks, this library alone, every Redis call in SLOWLOG): Redis is the
    bound, busy 1.13 s of the 1.24 s from the worker's start to the last start, all in the take script
    (Node: 0.38 s of CPU). Two phases. (1) Before the first start, 546 ms: the take moves due tasks of a
    priority into the turn queue, at most 512 + 64 + count per call, and reserves nothing until none is
    left to move; 93 calls of 5.5–6 ms, about 10.4 µs of Redis per task (Nest's start-up is about 12 ms of
    it). (2) Then 500 takes of about 1.2 ms for 100 tasks, 12.3 µs per task, against 0.75 ms (7.5 µs)
    for the same tasks without priorities (which ran at 107,000 tasks/s from the first start, 14 ms after
    the worker's start, in the same profile). The whole run spends 22.7 µs of Redis per task against 7.5.
    The commands inside the scripts explain it: per task 2.1 ZADD (the promotion's chunk ZADD and index
    \`ZADD LT\`), 1.0 INCRBY (the turn queue's count, per promoted task) and 1.0 HINCRBY (the per-priority
    count, per reserved task), and the take from the turn queue reads about 9 tasks per merge step (its
    chunks are by submission sequence, so each holds all ten priorities: 5 calls per step), against one
    step per 100 without priorities. The commands themselves are about a third of the script's time; the
    rest is Lua and the per-call overhead of \`redis.call\`, so the number of calls is the cost.
  - Since (2026-11-27, same session): a task due at submit with a priority goes straight into its turn in
    the submit's batch (no move phase for it), and the reserve moves falling-due tasks in one ZADD per
    turn-queue chunk and counts priorities once per level per call. Runs after it, on this 2-core machine
    while other test processes ran (BullMQ's own rate swung from 9,200 to 14,000 tasks/s between runs):
    quick 60,435 against 14,008 tasks/s, 4.31×; full 54,791 against 9,213, 5.95×; full 29,511 against
    9,163, 3.2×. 0 inversions and 0 FIFO violations in each. The target is met in one run of three; a quiet
    machine's medians of three are still to be taken (issue 34). Chunking the turn queue by priority is the
    change left.
  - What would bring it closer (the first and the fourth are made since, see above): promote in batches (one ZADD and one
    \`ZADD LT\` per turn-queue chunk and one INCRBY per call, as \`wsAddMany\` does at submit) and count
    priorities per call (one HINCRBY per level met, not per task): about 4 calls per task fewer. Chunk the
    turn queue by priority and sequence, so that a take of 100 of one level reads one or two chunks. Put a
    task that is due at submit (no delay) straight into its turn at submit, in the submit script's batch:
    no move phase before the first start for such tasks (here ~45 % of the time from the worker's start).
    Keeping the priority in the waiting-set member (or its chunk) would spare the move the record read and
    parse. Without those, the ceiling is about what the runs show: ~12 µs of Redis per task served, i.e.
    80,000 tasks/s at best from the first start here, about 4.5× BullMQ.

## Workload 14: groups (issue 29)

\`bench/groups.ts\` (\`npm run bench -- --only=groups [--quick]\`): one tenant submits 100,000 tasks (20,000 quick)
in batches of 1,000; then one worker starts at concurrency 50 with an empty handler, and once a tenth of that
backlog has started, 200 small tenants (50 quick) submit 20 tasks each while it drains: one call per tenant, a
tenant every 2 ms (0.4 s of submits, 0.1 s quick). A small tenant's task carries the time just before its submit
call; its **wait** runs from there to its handler's start (one process runs both). **Throughput**: all tasks, from
the worker's start (start-up included) to the last handler start, and from the first start. "Big backlog at
small submits / at last small start" shows that the small tenants ran while the backlog drained (0 at the end:
they ran after it). A warm-up pass (2,000 + 10 × 20) runs on each system first; this library's two settings then
run twice each, alternating, and the better of each by tasks/s is shown with both rates (as in workload 1).

- This library with groups (each tenant a group, \`submitMany\` with \`group\`) and without (plain FIFO, the same
  tasks): the issue's "≥ 80 %" is the first's tasks/s over the second's.
- groupmq 1.1 (a devDependency): each tenant a group; it runs one job of a group at a time, so the big tenant's
  backlog drains one job after another while the other slots serve the small tenants. A Worker at concurrency
  50 with \`reserveScanLimit: 256\`: with its default 20, a reserve looks at the first 20 groups of its ready set
  and often found none free (small p99 121–195 ms against 79–87 ms in quick runs). Its producer batches adds
  with \`autoBatch\` (up to 1,000 per script call, flushed on the next timer tick, about 1 ms).
- BullMQ as users run it today: one FIFO queue (\`addBulk\`), so the small tenants wait behind the backlog.

Targets: the small tenants' p99 wait ≤ 50 ms while the big backlog drains, and with groups ≥ 80 % of the
throughput without. Runs of 2026-11-27 on the shared 2-core machine while other sessions ran test suites
(load average 3–6; BullMQ's own rate went from 3,600 to 18,500 tasks/s between quick runs). Waits in ms;
the library as of the commit named.

| run | library | groups: small wait p50 / p99 | tasks/s groups / no groups | groupmq: small p50 / p99, tasks/s | BullMQ FIFO: small p99, tasks/s | no groups: small p99 |
| --- | --- | --- | --- | --- | --- | --- |
| quick 1 | 69784d0 | 71.9 / 117.7 | 38,815 / 66,079 (59 %) | 41.5 / 84.7, 3,842 | 909, 18,456 | 217 |
| quick 2 | 69784d0 | 24.5 / 65.0 | 49,266 / 96,114 (51 %) | 50.8 / 107.7, 3,841 | 1,648, 10,105 | 179 |
| quick 3 | 69784d0 | 88.0 / 136.8 | 36,932 / 85,834 (43 %) | 46.1 / 96.5, 3,133 | 1,424, 12,035 | 208 |
| full | 69784d0 | 268.6 / 456.2 | 49,656 / 108,623 (46 %) | 42.6 / 88.0, 3,645 | 8,344, 10,591 | 794 |
| quick 4 | 47bc112 | 8.3 / 23.1 | 49,181 / 65,848 (75 %) | 43.8 / 93.1, 3,820 | 1,759, 9,929 | 210 |
| quick 5 | 47bc112 | 5.5 / 16.7 | 56,128 / 60,122 (93 %) | 71.7 / 145.6, 3,648 | 2,949, 6,086 | 279 |
| quick 6 | 47bc112 | 8.2 / 21.7 | 49,324 / 67,211 (73 %) | 82.3 / 150.3, 3,989 | 1,854, 9,431 | 252 |
| full | 47bc112 | 5.8 / 13.1 | 58,638 / 69,217 (85 %) | 44.3 / 94.5, 3,993 | 7,902, 11,065 | 1,326 |

After 3ca6080 (acks free a group's slots once per group per call), one quick run: small p99 9.1 ms, 82,662
against 84,788 tasks/s without groups (97 %); groupmq p99 84.3 ms, 3,605 tasks/s; BullMQ FIFO p99 923 ms.

The runs at 69784d0 took one run of each setting (before the better-of-two). Six more quick runs at 47bc112
with one run of each: p99 7.3 / 53.2 / 39.0 / 25.5 / 19.9 / 63.5 ms, throughput 80 / 93 / 76 / 77 / 78 / 38 %
of no groups; one more full run: p99 6.8 ms, 83 %.

- **69784d0: neither target met** (p99 65–137 ms quick, 456 ms full; 43–59 % of the throughput). Where the time
  went (\`bench/profile/groups.ts\`: every Redis call from the worker's start in SLOWLOG, INFO commandstats, and the
  groups' keys sampled every 10 ms): the big tenant's tasks waited in the type's waiting set, and the reserve moved
  due tasks into their groups' queues in due order, \`count\` + 512 per call. A small tenant's task, due after all of
  them, entered the rotation only once every big task ahead of it had been moved: at 20,000, the small tenants
  submitted from about 200 ms on (29 groups waiting at 258 ms), but the rotation held the big group alone until the
  last big task was moved, between 258 and 295 ms; the small tenants then ran within about 60 ms. The move was costly too: the take script spent 20–27 µs
  of Redis per task with groups against 8–10 without (calls of up to 11–17 ms), per moved task a ZADD into the
  group's queue, an INCRBY, a ZSCORE and a second read and parse of its record.
- **47bc112** (the library's work on issue 29, the same day): a task of a group due at submit goes straight into its
  group's queue in the submit's batch, and tasks falling due move in one ZADD per group per step. The small tenants'
  tasks are in the rotation as soon as they are submitted: the 50 (200) tenants were all done 101–106 ms (403 ms)
  after the first one's submit, i.e. as fast as they submitted. **p99 ≤ 50 ms: met** in the runs above (13–23 ms),
  though 2 of the 6 single quick runs went over (53, 64 ms; not profiled: on this loaded machine a stall of Redis or
  the worker lands directly in a 0.1 s window). **Throughput ≥ 80 %: met in both full runs (85, 83 %), not reliably
  in the quick ones** (73–93 %; single runs 38–93 %).
- Where the rest of the throughput goes (47bc112, 3 alternating profile rounds of 20,000 + 50 × 20): Redis is the
  bound (busy 280–318 ms of the 350–468 ms), and the take script (acks included) costs 12.5–14.6 µs of Redis per task
  with groups against 8.9–10.7 without. The difference is in the ack: per task one HINCRBY (the group's running
  count, \`grun\`), one HEXISTS (groups held out, \`gx\`) and one HDEL (the id → group map, \`gof\`), 1.0 of each per
  task in commandstats, where every other command runs 0.01–0.07 times per task. Submits cost more too: the big
  tenant's 60,000–87,000 tasks/s with a group against 69,000–105,000 without (\`gof\` HSET, backlog ZINCRBY, the
  group queue's ZADD).
- What I would change in the library (not changed here): (1) in \`groupsFreed\` (groups.lua), count the ended
  reservations per group and write one HINCRBY and one HEXISTS per group and one HDEL of all the ids per call: with
  one big group, three calls per batch of acks instead of three per task, about the gap measured. (2) Carry each
  task's group in its reservation (the take knows it), so that the ack reads no \`gof\`; better, keep it in the
  task's record instead of a hash beside it (an HSET at submit and an HDEL at ack per task, and ~60 bytes per
  pending task: 251 against 191 bytes for a task delayed an hour). (3) A group's queue is one sorted set: 100,000
  due tasks of one group make a skip list, 336 bytes per pending task against 195 without a group (100,000 due at
  submit, used_memory); chunking groups' queues as the waiting set is chunked (listpacks of 128) would bring that
  near 200. (4) With many groups in the rotation each visit gives a group a share of 1 or 2 and costs about 15
  calls (\`groupLimit\` and \`groupRate\` alone 4 HGETs of \`gset\` and the limits hash per visit): read the type's
  defaults once per call and the groups' settings with one HMGET per call. Not the bound here after 47bc112 (the
  small tenants kept up with their submits), but it would be with thousands of groups due at once.
- groupmq: one job per group at a time is its promise and its limit here: the big tenant's backlog drains one job
  after another, 3,100–4,000 tasks/s over the whole run (100,000 in about 27 s), and a small tenant's 20 tasks run
  one after another (p50 42–82 ms, p99 85–150 ms). About 30 Redis commands per task; Node CPU 13–19 s for the full
  run against 0.5–0.7 s for this library.
- FIFO: BullMQ's small tenants waited behind the whole backlog, p99 0.9–2.9 s quick and 7.9–8.3 s full; this
  library without groups 0.2–0.3 s and 0.8–1.3 s (it drains the backlog faster).
`;
