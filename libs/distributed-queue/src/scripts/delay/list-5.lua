--[[
  One page of a type's running tasks (by lease deadline) or recently done ids (newest first): O(log n +
  limit) (done: a list of at most keepDone). Waiting tasks are paged by list-waiting-1.lua in bounded steps.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] done  KEYS[5] running
  ARGV[1] state ('running' | 'done')  ARGV[2] offset  ARGV[3] limit
  Returns: { now, then per task: id, due (or false), record (or false), reservation (or false) }
]]
--- @include "includes/now-ms"
--- @include "includes/lease"

local waiting, active, jobs, done, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local state, offset, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = nowMs()
local out = { now }
local function add(id, due, withRecord)
  out[#out + 1] = id
  out[#out + 1] = due or false
  out[#out + 1] = withRecord and redis.call('HGET', jobs, id) or false
  out[#out + 1] = withRecord and redis.call('HGET', running, id) or false
end
if state == 'running' then
  local page = redis.call('ZRANGE', active, offset, offset + limit - 1)
  for _, id in ipairs(page) do
    local _, due = parseLease(redis.call('HGET', running, id))
    add(id, due, true)
  end
elseif state == 'done' then
  for _, id in ipairs(redis.call('LRANGE', done, offset, offset + limit - 1)) do add(id, false, false) end
end
return out
