--[[
  Moves dead letters back to waiting, ready now, with their attempts reset. Unreadable records stay dead.
  KEYS[1] dead  KEYS[2] waiting  KEYS[3] jobs  KEYS[4] errors
  ARGV[1] events channel  ARGV[2] limit when no ids are given  ARGV[3..] ids (none: the oldest `limit`)
  Returns: number of tasks re-driven
]]
--- @include "includes/head-score"
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/wake-if-earlier"

local dead, waiting, jobs, errors = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then ids = redis.call('ZRANGE', dead, 0, tonumber(ARGV[2]) - 1) end
local now = nowMs()
local before = headScore(waiting)
local n = 0
for _, id in ipairs(ids) do
  local r = parseRecord(redis.call('HGET', jobs, id), now)
  if r and redis.call('ZREM', dead, id) == 1 then
    r.attempts, r.due, r.flags = 0, now, ''
    redis.call('HSET', jobs, id, encodeRecord(r))
    redis.call('HDEL', errors, id)
    redis.call('ZADD', waiting, now, id)
    n = n + 1
  end
end
if n > 0 then wakeIfEarlier(ARGV[1], before, now, now) end
return n
