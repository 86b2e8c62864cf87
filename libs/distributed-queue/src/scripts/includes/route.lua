-- Shared helpers of the route (ordered) queue scripts.
-- Partition record `own` (HASH): owner, epoch, state ('active' | 'revoking'), next (owner after hand-over),
-- lease (ms: owner's claim expires), revokeAt, n (partition count producers must use), seq (last seq),
-- barrier (-1 = open; else items with a larger seq wait for the resize gate), touched (last take, seed's d1),
-- replays (times the in-flight batch was taken over).
-- Items are "<seq>:<json>".

local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function seqOf(item)
  return tonumber(string.match(item, '^(%d+):'))
end

local function fmt(n)
  return string.format('%.0f', n)
end

-- Is the caller the partition's owner with this epoch?
local function isOwner(ownKey, me, epoch)
  local o = redis.call('HMGET', ownKey, 'owner', 'epoch')
  return o[1] == me and tonumber(o[2]) == tonumber(epoch)
end

local function routeLog(enabled, ...)
  if enabled == '1' then redis.log(redis.LOG_NOTICE, table.concat({ ... }, ' ')) end
end
