--[[
  One page of a type's tasks in a state, oldest (earliest due) first: O(offset + limit) for running and
  done; for waiting ones, (offset + limit) per chunk of the waiting set read (see wsPage).
  KEYS[1] waiting  KEYS[2] active  KEYS[3] jobs  KEYS[4] done  KEYS[5] running
  ARGV[1] state ('ready' | 'delayed' | 'running' | 'done')  ARGV[2] offset  ARGV[3] limit
  Returns: { now, then per task: id, due (or false), record (or false), reservation (or false) }
]]
--- @include "includes/now-ms"
--- @include "includes/waiting-set"
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
if state == 'ready' or state == 'delayed' then
  local from, to, toNumber = '-inf', now, now
  if state == 'delayed' then from, to, toNumber = '(' .. string.format('%.0f', now), '+inf', math.huge end
  local members, dues = wsPage(waiting, from, to, toNumber, offset, limit)
  for i, member in ipairs(members) do add(idOfMember(member), dues[i], true) end
elseif state == 'running' then
  local page = redis.call('ZRANGE', active, offset, offset + limit - 1)
  for _, id in ipairs(page) do
    local _, due = parseLease(redis.call('HGET', running, id))
    add(id, due, true)
  end
elseif state == 'done' then
  for _, id in ipairs(redis.call('LRANGE', done, offset, offset + limit - 1)) do add(id, false, false) end
end
return out
