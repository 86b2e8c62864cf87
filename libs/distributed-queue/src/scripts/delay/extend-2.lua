#!lua flags=allow-oom
--[[
  Renews the leases of reserved tasks that are still ours. Runs past maxmemory (`allow-oom`, the shebang):
  it only moves existing members' scores (ZADD XX); refused, the leases of running tasks expired while Redis
  was full and other workers ran them again (every task 3 times in 2.5 s; test redis-eviction).
  KEYS[1] active  KEYS[2] running
  ARGV[1] lease ms  ARGV[2..] pairs of id, token
  Returns: ids whose reservation is lost (expired and recovered, or taken by another worker)
]]
--- @include "includes/check-reservations"
--- @include "includes/now-ms"

local ours, lost = checkReservations(KEYS[1], KEYS[2], 2)
if #ours > 0 then
  local deadline = nowMs() + tonumber(ARGV[1])
  local zadd = {}
  for _, id in ipairs(ours) do
    zadd[#zadd + 1] = deadline
    zadd[#zadd + 1] = id
  end
  redis.call('ZADD', KEYS[1], 'XX', unpack(zadd))
end
return lost
