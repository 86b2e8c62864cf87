--[[
  Removes up to `batch` waiting (delayed and ready) tasks of a type, a chunk at a time, with their records
  and last errors: the waiting set's first, then the turn queue's (due tasks of a priority, see
  priority.lua), then the groups' queues (see groups.lua). Running tasks are not waiting and are never touched. The caller repeats the call until
  it removes fewer than `batch`, so no single call holds Redis for long.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] errors
  ARGV[1] batch (at most ~5000: unpack's limit)
  Returns: the number of tasks removed
]]
--- @include "includes/groups"
--- @include "includes/task-logs"

local ws, batch = KEYS[1], tonumber(ARGV[1])
local members = wsPop(ws, batch)
if #members < batch then
  for _, member in ipairs(wsPop(turnsOf(ws), batch - #members)) do members[#members + 1] = member end
end
-- the groups' queues: a few groups at a time (the caller repeats the call); first the '' queue of the due
-- tasks without a group (see take-due.lua), which has no backlog entry
local queues = {}
if #members < batch then
  queues = redis.call('ZRANGE', ws .. ':gb', 0, 99)
  table.insert(queues, 1, '')
end
for _, g in ipairs(queues) do
  local key = groupKey(ws, g)
  local got = redis.call('ZRANGE', key, 0, batch - #members - 1)
  for _, member in ipairs(got) do
    groupRemoveDue(ws, g, member)
    members[#members + 1] = member
  end
  if #members >= batch then break end
end
local ids = {}
for i, member in ipairs(members) do ids[i] = idOfMember(member) end
if #ids > 0 then
  for i, g in ipairs(groupsOf(ws, ids)) do
    if g then
      groupBacklog(ws, g, -1)
      redis.call('HDEL', ws .. ':gof', ids[i])
    end
  end
end
-- NOTE: the records are not read (payloads may be large), so the counts per priority (and per group, of
-- delayed tasks of groups still waiting) are not kept per task: they go with the last waiting task.
if #members < batch and redis.call('EXISTS', ws, turnsOf(ws)) == 0 and tonumber(redis.call('GET', ws .. ':gn') or '0') <= 0 then
  redis.call('DEL', ws .. ':pc', ws .. ':gb', ws .. ':gn')
end
if #members == 0 then return 0 end
redis.call('HDEL', KEYS[2], unpack(ids))
redis.call('HDEL', KEYS[3], unpack(ids))
dropReports(KEYS[2], ids)
return #members
