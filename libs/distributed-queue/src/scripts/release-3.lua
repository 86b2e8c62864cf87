--[[
  Hands reserved tasks back (shutdown) without counting the attempt; they are ready at once.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs
  ARGV[1] events channel  ARGV[2..] pairs of id, token
  Returns: number of tasks handed back (stale reservations are skipped)
]]
--- @include "includes/common"

local waiting, active, jobs = KEYS[1], KEYS[2], KEYS[3]
local now = nowMs()
local before = headScore(waiting)
local n = 0
for i = 2, #ARGV, 2 do
  local id, token = ARGV[i], tonumber(ARGV[i + 1])
  local r = parseRecord(redis.call('HGET', jobs, id))
  if r and r.token == token and redis.call('ZREM', active, id) == 1 then
    if hasFlag(r, 'c') then
      redis.call('HDEL', jobs, id)
    else
      if r.attempts > 0 then r.attempts = r.attempts - 1 end
      redis.call('HSET', jobs, id, encodeRecord(r))
      redis.call('ZADD', waiting, r.due, id)
      n = n + 1
    end
  end
end
if n > 0 then wakeIfEarlier(ARGV[1], before, now, now) end
return n
