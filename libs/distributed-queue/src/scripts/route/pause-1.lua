--[[
  Pauses or resumes one partition of the route queue (the flag `paused` in its record). While it is set
  route-take starts nothing; pushes, acks and hand-overs go on. The owner learns it from its next take and
  at once from the message `h:<partition>`; a resume publishes `p:<partition>` so the owner looks again now.
  Idempotent.
  KEYS[1] own
  ARGV[1] 1 pause, 0 resume  ARGV[2] events channel  ARGV[3] partition number
  Returns: OUTCOME.OK
]]
--- @include "includes/outcome"

if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'paused', 1)
  redis.call('PUBLISH', ARGV[2], 'h:' .. ARGV[3])
else
  redis.call('HDEL', KEYS[1], 'paused')
  redis.call('PUBLISH', ARGV[2], 'p:' .. ARGV[3])
end
return OUTCOME.OK
