--[[
  Hands reserved tasks back (shutdown) without counting the attempt; they are ready at once.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] running
  ARGV[1] events channel  ARGV[2..] pairs of id, token
  Returns: number of tasks handed back (stale reservations are skipped)
]]
--- @include "includes/flags"
--- @include "includes/head-score"
--- @include "includes/now-ms"
--- @include "includes/record"
--- @include "includes/wake-if-earlier"

local waiting, active, jobs, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = nowMs()
local before = headScore(waiting)
local n = 0
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', running, id) == ARGV[i + 1] and redis.call('ZREM', active, id) == 1 then
    redis.call('HDEL', running, id)
    local r = parseRecord(redis.call('HGET', jobs, id), now)
    if r == nil or hasFlag(r, 'c') then
      redis.call('HDEL', jobs, id)
    else
      redis.call('ZADD', waiting, now, id)
      n = n + 1
    end
  end
end
if n > 0 then wakeIfEarlier(ARGV[1], before, now, now) end
return n
