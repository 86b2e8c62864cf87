--[[
  Lists dead letters, oldest first.
  KEYS[1] dead  KEYS[2] jobs  KEYS[3] errors
  ARGV[1] offset  ARGV[2] limit
  Returns: { total, then per task: id, died at, record or false, error json or false }
]]
local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = { redis.call('ZCARD', KEYS[1]) }
local page = redis.call('ZRANGE', KEYS[1], offset, offset + limit - 1, 'WITHSCORES')
for i = 1, #page, 2 do
  local id = page[i]
  out[#out + 1] = id
  out[#out + 1] = page[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or false
  out[#out + 1] = redis.call('HGET', KEYS[3], id) or false
end
return out
