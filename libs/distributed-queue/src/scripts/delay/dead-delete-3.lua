--[[
  Deletes dead letters for good.
  KEYS[1] dead  KEYS[2] jobs  KEYS[3] errors
  ARGV[1..] ids
  Returns: number deleted
  NOTE: a dead letter of a group (see groups.lua) is forgotten there too: <ws>:gof, beside `jobs`.
]]
--- @include "includes/task-logs"
--- @undeclared-keys
local gof = (string.gsub(KEYS[2], ':jobs$', ':wait:gof'))
local n = 0
for _, id in ipairs(ARGV) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', gof, id)
    dropReports(KEYS[2], { id })
    n = n + 1
  end
end
return n
