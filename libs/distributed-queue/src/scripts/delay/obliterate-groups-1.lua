--[[
  One bounded step of obliterating a type's groups (see groups.lua): takes up to `batch` group names from the
  structures that name them (ZSETs: the backlog, the rotation, the groups held by their rate, the listing
  index; hashes: the groups held out, their slots, their rates' state, their settings), deletes those groups'
  queues (UNLINK: freed in the background) and the names. The queue of the due tasks without a group ('')
  goes first. The caller repeats the call until it answers 0; that last call, with no name left, deletes the
  groups' structures themselves (`gof` and the rest: every key groups.lua and group-rate.lua name).
  KEYS[1] waiting
  ARGV[1] batch (at most ~1000)
  Returns: the names removed
]]
--- @include "includes/groups"

local ws, batch = KEYS[1], tonumber(ARGV[1])
redis.call('UNLINK', groupKey(ws, ''))
local removed = 0

local function drop(names)
  if #names == 0 then return end
  local keys = {}
  for i, g in ipairs(names) do keys[i] = groupKey(ws, g) end
  redis.call('UNLINK', unpack(keys))
  removed = removed + #names
end

for _, suffix in ipairs({ ':gb', ':gr', ':gt', ':gq' }) do
  local names = redis.call('ZRANGE', ws .. suffix, 0, batch - removed - 1)
  drop(names)
  if #names > 0 then redis.call('ZREM', ws .. suffix, unpack(names)) end
  if removed >= batch then return removed end
end
-- NOTE: HSCAN from 0 each time: the fields read are deleted, so the next call finds the others
for _, suffix in ipairs({ ':gx', ':grun', ':gtat', ':gset' }) do
  local scan = redis.call('HSCAN', ws .. suffix, '0', 'COUNT', batch - removed)
  local fields, names = {}, {}
  for i = 1, #scan[2], 2 do
    local field = scan[2][i]
    fields[#fields + 1] = field
    -- the settings' fields are '<setting>:<group>'
    names[#names + 1] = suffix == ':gset' and string.sub(field, 3) or field
  end
  drop(names)
  if #fields > 0 then redis.call('HDEL', ws .. suffix, unpack(fields)) end
  if removed >= batch then return removed end
end
if removed == 0 then
  local keys = {}
  for i, suffix in ipairs({ ':gof', ':gb', ':gr', ':gt', ':gq', ':gx', ':grun', ':gtat', ':gset', ':gv', ':gn' }) do keys[i] = ws .. suffix end
  redis.call('UNLINK', unpack(keys))
end
return removed
