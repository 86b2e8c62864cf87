--[[
  Distributed cron: removes a schedule; its last pending tick, if any, is returned so that the caller cancels
  it (left, it would find no schedule and do nothing, as does the one before it).
  KEYS[1] definitions  KEYS[2] versions  KEYS[3] chain ends  KEYS[4] last ticks  KEYS[5] catch-ups
  ARGV[1] name
  Returns: { existed (1/0), the pending tick task id or '' }
]]
local name = ARGV[1]
local existed = redis.call('HDEL', KEYS[1], name)
local old = redis.call('HGET', KEYS[3], name)
redis.call('HDEL', KEYS[3], name)
redis.call('HDEL', KEYS[4], name)
redis.call('HDEL', KEYS[5], name)
-- NOTE: the version counter stays, so a schedule created again under this name gets a new version.
local id = ''
if old then
  local v, t = string.match(old, '^(%d+):(%d+)')
  if v then id = name .. '@' .. v .. '@' .. t end
end
return { existed, id }
