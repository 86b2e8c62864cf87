--[[
  Deletes up to `batch` dead letters that died `age` ms ago or earlier (Redis clock; age 0: all), oldest first, with
  their records and errors. The caller repeats the call until it deletes fewer than `batch`.
  KEYS[1] dead  KEYS[2] jobs  KEYS[3] errors
  ARGV[1] age ms  ARGV[2] batch (at most ~5000: unpack's limit)
  Returns: the number of dead letters deleted
]]
--- @undeclared-keys
--- @include "includes/now-ms"
--- @include "includes/task-logs"

local cutoff = string.format('%.0f', nowMs() - tonumber(ARGV[1]))
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, tonumber(ARGV[2]))
if #ids == 0 then return 0 end
redis.call('ZREM', KEYS[1], unpack(ids))
redis.call('HDEL', KEYS[2], unpack(ids))
redis.call('HDEL', KEYS[3], unpack(ids))
dropReports(KEYS[2], ids)
-- a dead letter of a group (see groups.lua) is forgotten there too: <ws>:gof, beside `jobs`
redis.call('HDEL', (string.gsub(KEYS[2], ':jobs$', ':wait:gof')), unpack(ids))
return #ids
