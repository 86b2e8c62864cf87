-- Is the caller the partition's owner with this epoch?
local function isOwner(ownKey, me, epoch)
  local o = redis.call('HMGET', ownKey, 'owner', 'epoch')
  return o[1] == me and tonumber(o[2]) == tonumber(epoch)
end
