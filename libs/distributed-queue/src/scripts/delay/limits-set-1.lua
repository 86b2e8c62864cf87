--[[
  Sets fields of a type's limits hash (see includes/admission.lua) and wakes its workers when one changed:
  a limit raised or removed may let them start more now. A rate limit that changed starts afresh (its GCRA
  state is dropped: a slower limit's debt must not hold back a faster one).
  KEYS[1] limits
  ARGV[1] the type's events channel  ARGV[2..] pairs of field, value ('' removes the field)
  Returns: how many fields changed.
]]
local changed, rate = 0, false
for i = 2, #ARGV, 2 do
  local field, value = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', KEYS[1], field)
  if value == '' then
    if old then redis.call('HDEL', KEYS[1], field) end
  elseif old ~= value then
    redis.call('HSET', KEYS[1], field, value)
  end
  if (old or '') ~= value then
    changed = changed + 1
    if string.sub(field, 1, 2) == 'rl' then rate = true end
  end
end
if rate then redis.call('HDEL', KEYS[1], 'tat') end
if changed > 0 then redis.call('PUBLISH', ARGV[1], 'w:0') end
return changed
