--[[
  Appends ordered tasks to one partition, applying the reject strategy when it is full. Each is stored as
  "<seq>:<at>:<task json>", `at` being Redis's time now: a task's dueAt never comes from a machine's clock.
  Idempotent per request id: the reply is kept for a short while in the id's bucket, and a repeated
  call (a command re-sent after a reconnect, a delayed task's move run again) returns it without appending
  anything again. A call that appended nothing (every task refused) keeps no reply: repeated, it tries again.
  KEYS[1] partition list  KEYS[2] partition record (own)  KEYS[3] the request id's bucket (see request-reply.lua)  KEYS[4] the partition's event
  stream  KEYS[5] its recorded flag (while it exists, submits are logged for the history)
  ARGV[1] partition count the producer used  ARGV[2] max length  ARGV[3] strategy (Discard|DiscardOldest|Exception)
  ARGV[4] events channel  ARGV[5] partition number  ARGV[6] lua log (0/1)  ARGV[7] request ttl ms
  ARGV[8] event stream length (0: none)
  ARGV[9] '1' when the tasks are delayed ordered tasks entering now (their submit was logged on the delay
          queue's stream: not logged again), else '0'
  ARGV[10] request id  ARGV[11..] task json
  Returns: { OUTCOME.STALE_COUNT, n } when the producer's partition count is not the partition's (nothing
           written); else per task a pair: outcome (QUEUED, DISCARDED, DROPPED_OLDEST, or PARTITION_FULL
           under Exception: nothing past the first full point is written) and the dropped task's json for
           DROPPED_OLDEST ('' otherwise)
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/item-body"
--- @include "includes/now-ms"
--- @include "includes/route-log"
--- @include "includes/event-log"
--- @include "includes/request-reply"

local list, own, request = KEYS[1], KEYS[2], KEYS[3]
local replied = earlierReply(request, ARGV[10])
if replied then
  if string.sub(replied, 1, 1) == '[' then return cjson.decode(replied) end
  local out = {}
  for i = 1, tonumber(replied) do
    out[#out + 1] = OUTCOME.QUEUED
    out[#out + 1] = ''
  end
  return out
end
local n = redis.call('HGET', own, 'n')
if n ~= ARGV[1] then return { OUTCOME.STALE_COUNT, n or '' } end
local max, strategy = tonumber(ARGV[2]), ARGV[3]
local wasEmpty = redis.call('LLEN', list) == 0
local now = nowMs()
local at = fmt(now)
local out, queued, wrote = {}, 0, false
local logged = ARGV[9] ~= '1' and tonumber(ARGV[8]) > 0 and redis.call('EXISTS', KEYS[5]) == 1
local ids, types, keys, bodies, dues = {}, {}, {}, {}, {}
for i = 11, #ARGV do
  local len = redis.call('LLEN', list)
  local accept = true
  if len >= max then
    if strategy == 'Exception' then
      out[#out + 1] = OUTCOME.PARTITION_FULL
      out[#out + 1] = ''
      break
    elseif strategy == 'DiscardOldest' then
      out[#out + 1] = OUTCOME.DROPPED_OLDEST
      out[#out + 1] = itemBody(redis.call('LPOP', list))
    else
      out[#out + 1] = OUTCOME.DISCARDED
      out[#out + 1] = ''
      accept = false
    end
  else
    out[#out + 1] = OUTCOME.QUEUED
    out[#out + 1] = ''
    queued = queued + 1
  end
  if accept then
    wrote = true
    local seq = redis.call('HINCRBY', own, 'seq', 1)
    redis.call('RPUSH', list, fmt(seq) .. ':' .. at .. ':' .. ARGV[i])
    if logged then
      local ok, task = pcall(cjson.decode, ARGV[i])
      if ok and type(task) == 'table' then
        ids[#ids + 1], types[#types + 1], keys[#keys + 1] = tostring(task.id), tostring(task.type), tostring(task.key)
        bodies[#bodies + 1], dues[#dues + 1] = cjson.encode(task.payload), now
      end
    end
  end
end
if #ids > 0 then
  logEvent(KEYS[4], tonumber(ARGV[8]), 'submitted', { 'ids', cjson.encode(ids), 't', cjson.encode(types), 'k', cjson.encode(keys),
    'b', cjson.encode(bodies), 'due', cjson.encode(dues) })
end
if wasEmpty and redis.call('LLEN', list) > 0 then
  redis.call('PUBLISH', ARGV[4], 'p:' .. ARGV[5])
end
-- NOTE: the common reply (every task queued) is kept as its count, to keep the bucket small. A refusal is
-- not kept: a delayed task's move refused by its full partition is retried under the same request id.
if wrote then
  local keep = queued * 2 == #out and tostring(queued) or cjson.encode(out)
  keepReply(request, ARGV[10], keep, ARGV[7])
end
routeLog(ARGV[6], 'route-push', KEYS[1], #ARGV - 10)
return out
