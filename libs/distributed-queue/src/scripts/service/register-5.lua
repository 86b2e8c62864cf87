--[[
  Service mode: registers (or renews) one instance of an application and the task types it handles. Run at
  start-up and then as the instance's heartbeat. A type belongs to one application: a type registered by
  another application is refused. Expired instances of the application are removed on the way. The
  schedulers are told (a message on the changes channel) only when something changed: an instance joined,
  moved or expired, or a type or its options are new; a plain renewal publishes nothing.
  KEYS[1] apps (SET)  KEYS[2] type owners (HASH type -> app)  KEYS[3] the app's types (HASH type -> options
  JSON)  KEYS[4] the app's instances (ZSET id -> live until, ms)  KEYS[5] the app's instance URLs (HASH id -> url)
  ARGV[1] app  ARGV[2] instance id ('' registers the types only)  ARGV[3] callback URL  ARGV[4] ttl ms
  ARGV[5] changes channel  ARGV[6..] pairs of type, options JSON
  Returns: { 1, now, changed (1/0) } registered, or { 0, type, owner } when a type belongs to another application
]]
--- @include "includes/now-ms"

local app = ARGV[1]
for i = 6, #ARGV, 2 do
  local owner = redis.call('HGET', KEYS[2], ARGV[i])
  if owner and owner ~= app then return { 0, ARGV[i], owner } end
end
local now = nowMs()
local changed = redis.call('SADD', KEYS[1], app)
for i = 6, #ARGV, 2 do
  if redis.call('HGET', KEYS[3], ARGV[i]) ~= ARGV[i + 1] then
    redis.call('HSET', KEYS[2], ARGV[i], app)
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    changed = 1
  end
end
if ARGV[2] ~= '' then
  if redis.call('ZADD', KEYS[4], now + tonumber(ARGV[4]), ARGV[2]) == 1 then changed = 1 end
  if redis.call('HGET', KEYS[5], ARGV[2]) ~= ARGV[3] then
    redis.call('HSET', KEYS[5], ARGV[2], ARGV[3])
    changed = 1
  end
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
if #dead > 0 then
  redis.call('ZREM', KEYS[4], unpack(dead))
  redis.call('HDEL', KEYS[5], unpack(dead))
  changed = 1
end
if changed == 1 then redis.call('PUBLISH', ARGV[5], app) end
return { 1, now, changed }
