--[[
  One bounded step of draining one group of a type (see groups.lua): removes its due tasks (its queue) and,
  one HSCAN page of the type's grouped tasks at a time, its delayed ones (they wait in the type's waiting
  set), with their records and last errors. Running and dead tasks of the group are not touched. The caller
  repeats the call with the returned cursor until it is '0' and a call removed nothing.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] errors
  ARGV[1] group  ARGV[2] HSCAN cursor of <ws>:gof ('0' at the start)  ARGV[3] batch (at most ~1000)
  Returns: { tasks removed, the cursor to go on from ('0': the scan is over) }
]]
--- @include "includes/record"
--- @include "includes/groups"
--- @include "includes/task-logs"

local ws, g, batch = KEYS[1], ARGV[1], tonumber(ARGV[3])
local ids = {}
local due = redis.call('ZRANGE', groupKey(ws, g), 0, batch - 1)
for _, member in ipairs(due) do
  groupRemoveDue(ws, g, member)
  ids[#ids + 1] = idOfMember(member)
end
local cursor = ARGV[2]
if #ids < batch then
  -- NOTE: COUNT bounds the records read (payloads may be large) by a hundred a step
  local scan = redis.call('HSCAN', ws .. ':gof', cursor, 'COUNT', 100)
  cursor = scan[1]
  for i = 1, #scan[2], 2 do
    local id = scan[2][i]
    if scan[2][i + 1] == g then
      local r = parseRecord(redis.call('HGET', KEYS[2], id), 0)
      if r and wsRemove(ws, memberOf(r.seq, id), r.seq) == 1 then
        priorityCount(ws, r.priority, -1)
        ids[#ids + 1] = id
      end
    end
  end
end
if #ids > 0 then
  redis.call('HDEL', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(ids))
  dropReports(KEYS[2], ids)
  redis.call('HDEL', ws .. ':gof', unpack(ids))
  groupBacklog(ws, g, -#ids)
end
return { #ids, cursor }
