--[[
  Moves the given dead letters back to waiting, ready now, with their attempts reset; they keep their
  submission order among tasks due now. Unreadable records stay dead. Ids no longer dead are skipped, and a
  repeated call (same request id, e.g. re-sent after a lost reply) returns the first call's count.
  KEYS[1] dead  KEYS[2] waiting  KEYS[3] jobs  KEYS[4] errors  KEYS[5] the request id's bucket (see request-reply.lua)
  ARGV[1] events channel  ARGV[2] how long the reply is kept (ms)  ARGV[3] request id  ARGV[4..] ids
  Returns: number of tasks re-driven
]]
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/requeue"
--- @include "includes/request-reply"

local dead, waiting, jobs, errors = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local previous = earlierReply(KEYS[5], ARGV[3])
if previous then return tonumber(previous) end
local now = nowMs()
local before = headScore(waiting)
local n = 0
for i = 4, #ARGV do
  local id = ARGV[i]
  local r = parseRecord(redis.call('HGET', jobs, id), now)
  if r and redis.call('ZREM', dead, id) == 1 then
    -- NOTE: re-driven to run: a deadline that buried it (TaskExpiredError) is cleared with the rest
    r.attempts, r.due, r.flags, r.place, r.expires = 0, now, '', nil, nil
    redis.call('HSET', jobs, id, encodeRecord(r))
    redis.call('HDEL', errors, id)
    requeue(waiting, r, id, now)
    n = n + 1
  end
end
if n > 0 then wakeIfEarlier(ARGV[1], before, now, now) end
keepReply(KEYS[5], ARGV[3], n, ARGV[2])
return n
