--[[
  Service mode: an instance leaves (graceful shutdown): no delivery is sent to it any more.
  KEYS[1] the app's instances  KEYS[2] the app's instance URLs
  ARGV[1] instance id
  Returns: 1 when it was registered, else 0
]]
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
