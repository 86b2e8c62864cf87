--[[
  Service mode: an instance leaves (graceful shutdown): no delivery is sent to it any more; the schedulers
  are told when it was registered.
  KEYS[1] the app's instances  KEYS[2] the app's instance URLs
  ARGV[1] instance id  ARGV[2] changes channel  ARGV[3] app
  Returns: 1 when it was registered, else 0
]]
redis.call('HDEL', KEYS[2], ARGV[1])
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
if removed == 1 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
return removed
