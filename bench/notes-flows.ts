/** What docs/benchmarks.md says about workload 15 (flows, issue 30), after the other workloads' notes. */
export const FLOW_NOTES = `## Workload 15: flows (issue 30)

\`bench/flows.ts\` (\`npm run bench -- --only=flows [--quick]\`): 1,000 flows of one parent waiting for 10 children,
no-op handlers, everything in one process (one clock). This library: \`TaskFlowService.submitFlow\` of 11 nodes
(type \`child\` × 10, type \`parent\` depending on all ten), one worker application with a worker per type at
concurrency 50 and a producer application beside it. BullMQ 6.7: \`FlowProducer.add\` of a parent in queue
\`<name>-parent\` with 10 children in \`<name>-child\`, a \`Worker\` per queue at concurrency 50, completed jobs
trimmed to 1,000 (as in the other workloads). The workers run first; then all 1,000 flows are submitted at once
(every submit call in flight together). **flows/s**: 1,000 over the time from the first submit to the last
parent's completion (this library: the flow's end, \`onFlowEnded\` 'completed', heard on either application;
BullMQ: the parent Worker's 'completed' event). **Parent start after last child**: per flow, the parent
handler's start minus the end of its last child's handler (\`performance.timeOrigin + performance.now()\` in
the handlers), p50/p99/max over the 1,000. "early parents" counts a parent that started before its ten
children finished, "duplicated" a second start of any node (0 in every run, both systems). A pass of 100 flows
on each system runs first and is not reported; a quick run then runs each system once, a full run three
times, alternating, and shows the median run by flows/s with every run's flows/s and p99.

Targets: ≥ 5× BullMQ's flows/s, and the parent's start p99 ≤ 5 ms after its last child. **Neither is met.**

Runs of 2026-11-27 on the shared 2-core machine while other sessions ran their suites (browser tests among
them: load average 3 to 11 during these runs; BullMQ's own rate moved from 39 to 275 flows/s between runs, so
only figures of one run compare). The library as of the commit named (9b6ea3f made the nodes a process
finished in one tick settle together: one settle call per flow and one release call per dependents' type
instead of two calls per node; the runs from 24b4a09 on have it; the later commits changed no call of the
workload's path; the first run's working tree also held another session's uncommitted consumer changes).

| run | library | load | this library flows/s | BullMQ flows/s | ratio | p50 / p99 / max ms, this library | p99 ms, BullMQ | cmds/flow (BullMQ) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
| quick | 51fa51a | 1 | 291 | 275 | 1.06× | 15.4 / 50.3 / 247 | 723 | 295 (495) |
| quick | 24b4a09 | 3 | 140 | 93 | 1.50× | 17.9 / 64.0 / 553 | 1,768 | 229 (496) |
| quick | 24b4a09 | 3 | 438 | 156 | 2.82× | 11.6 / 63.8 / 126 | 748 | 230 (496) |
| quick | 23720b2 | 7 | 273 | 131 | 2.08× | 15.1 / 103.5 / 135 | 978 | 229 (496) |
| quick | 23720b2 | 7 | 156 | 60 | 2.59× | 26.9 / 217.5 / 272 | 2,704 | 230 (496) |
| quick | 23720b2 | 7 | 95 | 104 | 0.92× | 36.4 / 278.8 / 360 | 1,682 | 234 (496) |
| quick | b18b144 | 10 | 82 | 39 | 2.09× | 49.0 / 370.5 / 523 | 3,272 | 237 (496) |
| quick | b18b144 | 10 | 149 | 100 | 1.49× | 36.4 / 284.6 / 558 | 1,152 | 234 (496) |
| full (3 each) | 23720b2 | 7 | 237 (188 / 239 / 237) | 88 (107 / 88 / 74) | 2.69× | 19.1 / 133.3 / 174 (p99s 177 / 127 / 133) | 1,090 (1,148 / 1,090 / 1,365) | 229 (496) |
| full (3 each) | 8e62c5e | 7 | 170 (170 / 140 / 184) | 85 (85 / 116 / 78) | 2.00× | 26.2 / 208.6 / 395 (p99s 209 / 252 / 222) | 1,624 (1,624 / 959 / 1,811) | 231 (496) |
| full (3 each) | 229326d | 9 | 198 (198 / 159 / 224) | 86 (86 / 82 / 102) | 2.31× | 19.9 / 126.2 / 165 (p99s 126 / 278 / 161) | 1,125 (1,125 / 1,494 / 1,750) | 229 (496) |

What they mean:

- Throughput: 1.5–2.8× BullMQ in the runs since 9b6ea3f (one quick run 0.92×, on a machine at load 7), not
  5×. Per flow this library costs about half of BullMQ's CPU on both sides: Node 1.9–3.6 s against 4.4–6.5 s
  for the 1,000 flows, Redis 1.2–1.9 s against 2.8–3.8 s, 229–237 Redis commands per flow (scripts' own included)
  against 496. On two cores shared by Node, Redis and other sessions the rate follows the CPU per flow, and
  the ratio is about the CPU ratio. Eleven plain tasks cost about 0.2 ms of CPU in all (workload 1: ~8 µs of
  Node and ~8 µs of Redis per task); a flow of eleven costs 3–5.5 ms here, fifteen to twenty-five times more.
- Parent start (runs since 9b6ea3f): p50 12–49 ms, p99 64–371 ms against BullMQ's 750–3,300 ms (its parents wait in its queue
  behind the backlog), so 4–28× better than BullMQ but 13–75× the target. The path alone is longer than the
  target allows under load: with one flow at a time on an otherwise idle Redis (\`--one-at-a-time\` below)
  p50 2.5–2.7 ms and p99 9–9.5 ms (50 ms in one run at load 10), BullMQ p50 2.5–3.6 ms, p99 9.9–31.6 ms.

Where the time goes (\`bench/profile/flows.ts\`: the workload on one system as the benchmark runs it, then in two
phases, every flow submitted before the workers start and then the workers alone; SLOWLOG of every call (which
itself inflates Redis times two to three times: read the shares), INFO commandstats, V8 CPU profiles by self and
total time, \`--one-at-a-time=N\`, \`--concurrency\`, \`--bullmq\`; and MONITOR over single flows). Library at
24b4a09–6ddd9d7.

- Round trips per flow, counted with MONITOR over single flows: \`submitFlow\` makes six calls one after
  another (define, park the parent, the \`settled\` HMGET, submit the ten children, start, the index ZADD).
  The run then makes: a settle per flow per tick of finished nodes (2.1–2.2 per flow under load: a flow's ten
  children finish over about two ticks), a release per tick for all flows (0.2 per flow), takes (0.45–0.53
  per flow, acks riding on them), one context read per parent (not batched), the parent's settle, and one
  PUBLISH of the flow's end from the client. In all about 7.7 script calls per flow against BullMQ's 23.3
  EVALSHA and a MULTI/EXEC.
- The two phases, alone: submitting the 1,000 flows with no worker running took 1.5–2.4 s (420–675 flows/s;
  Node 0.7–1.0 ms and Redis 0.5–0.9 ms of CPU per flow), running them with nothing else submitting 1.8–3.3 s
  (305–565 flows/s; Node 0.9–1.1 ms, Redis 0.7–1.6 ms per flow). Either half alone is below 5× BullMQ's whole
  run; in the benchmark they overlap and share the two cores.
- Redis, submit (SLOWLOG shares): the children's submit call (ten tasks in one call) 40–55 % of the Redis time,
  define 15–20 % (44 HSETNX per flow), park 12–15 %, start 4–6 %. Run: settle about 30 %, take 27–30 %,
  release 12 %, context 10 %.
- Redis, the fixed cost of a call: the flow scripts carry the includes they are built with, whose top level
  runs on every call. Called in isolation with nothing to do (the early return), settle cost 13.7 µs and
  flow-release 28 µs against 1.9 µs for \`return 1\` (one pipelined run of 20,000 calls each; noisy here):
  flow-release inlines 30.7 kB (groups, priorities, event log, record codec). A take is similar (53.7 kB), and
  takes here are small (19–24 tasks per call), so its fixed part weighs: 840–1,100 µs logged per take, about
  45 µs per task against 7.5 in workload 1.
- Node (V8 profiles): in the submit phase \`submitFlow\` is about 42 % of the busy time, \`FlowStore.define\` 22 %
  (the defs' JSON and the argument list), the library's own command encoding (\`toWritable\`, \`encodeCommand\`)
  11–14 %, one socket write per command (\`writeBuffer\`, a system call each) 8–17 % self time, garbage
  collection 8–15 %. In the run, script calls are about 23 % of the busy time, the settle flush 13 %, takes
  10 %. (The profiles' "dispatch" entry is the profiler's own session.)
- The parent's path, one flow at a time (MONITOR, whose own cost is in these gaps): the last child's handler
  ends; its settle reaches Redis 0.6–1.9 ms later; the release follows about 0.6 ms after and PUBLISHes
  the parent type's wake-up; the parent's take arrives 1.2–1.7 ms after that; its context read 0.5–1.0 ms after
  the take; then the handler. Four round trips in series and a pub/sub hop, each one queued behind whatever
  else the connection and Redis hold. With everything submitted first (phase 2 alone) the p99 was 30–34 ms on
  the calmer runs; with the 1,000 submits in flight (6,000 script calls queued at once by the producer) 64–280.
- A child's slot stays taken until its flow settled and its dependents were told (the consumer counts
  \`settling\` against its free slots), two queued round trips beyond its handler. Workers at concurrency 200
  instead of 50 did not run faster here (two runs each at load 7–11: inconclusive on this machine).
- To check: a few hand-backs of tasks reserved ahead (\`release-4.lua\`, 0.01 calls per flow) logged 17–52 ms
  each in SLOWLOG during loaded runs; one call holding Redis that long lands directly in the p99.

Runs of 2026-11-28 on a calmer machine (load 0.4–3: one other test file running at times), \`--quick\`, after
this session's changes (a connection's writes of one tick in one system call; a new flow's nodes written one
command per hash; script calls' arguments built without ioredis's copy): **1.43–2.46× BullMQ, one run 0.89×
while a test ran beside it** (this library 309–578 flows/s, BullMQ 226–346), parent start p50 8–16 ms and
p99 24–126 ms (BullMQ 392–611 ms), 194 Redis commands per flow (was 237), Node 1.7–2.1 s and Redis 0.9–1.2 s
of CPU for the 1,000 flows (BullMQ 2.4–3.7 s and 1.5–2.1 s). Then (84292e1) a node whose dependencies left
nothing to read is released without the read: three runs 539–656 flows/s against BullMQ's 314–337,
**1.62–1.95×**, parent start p50 6.2–7.8 ms and p99 36–52 ms (BullMQ 439–531), 172 commands per flow. One
flow at a time (200, \`--one-at-a-time=200\`): parent start p50/p99/max 1.6/8.9/18.8 ms, BullMQ 1.6/9.3/9.7
(before: p50 2.5–2.7, p99 9–9.5). The same 1,000 flows in the profile's two phases
(\`bench/profile/flows.ts --no-slowlog\`): submitting alone 457–613 ms (Node 0.38–0.54 s, Redis 0.23–0.33 s;
before these changes 566–644 ms, Node 0.77–0.84 s, Redis 0.33–0.41 s), running alone 1,017–1,044 ms (Node
0.67–0.77 s, Redis 0.64–0.68 s). Measured in isolation: 20,000 script calls issued 100 a tick cost Redis
61–89 ms of CPU with the writes of a tick together against 130–205 ms one write each; building a 64-argument
script call took 13–20 µs through ioredis's constructor and takes 3–6 µs now.

What this says: the phases alone add up to 1.5 s, but together they take 1.5–2.4 s and Node does 0.6–0.8 s
more work (1.9–2.1 s against 1.1–1.3 s): a thousand \`submitFlow\` calls in flight in the process that also runs
the workers. Freeing a child's slot as soon as its handler returned (its ack still waiting on the settle) was
tried and changed nothing measurable (540 and 577 flows/s against 546; reverted). The 5× target needs about a
third of today's CPU per flow on both sides; the calls per flow are already a third of BullMQ's, so what is
left is each call's own cost in Node (encoding, ioredis's command and reply handling, garbage) and the
interference above; both belong to issue 34's round.

What would bring it closer (open):

- Fewer calls per \`submitFlow\` (since 613af37 three in series: define, park, then the roots' submit beside the
  index write): batch the park and roots' submits of concurrent \`submitFlow\`s per type and tick, as settles are.
- Leaner scripts for the hot calls: flow-release and take pay their includes' top level on every call; a
  release without groups or priorities in play need not load them.
- Shorten the parent's path: read the contexts of the parents started in one take in one call per flow slot
  per tick (as settles are), or skip the read when the settle already knows no dependency left a result or
  error (the release could mark the parked task as needing none, as roots are marked); find what the
  0.6–1.9 ms between a handler's end and its settle reaching Redis are spent on.
- If a slot is meant to bound handlers only: free a child's slot once its handler returned and keep only its
  ack waiting on the settle, so that slots do not wait on the flow's round trips.
`;
