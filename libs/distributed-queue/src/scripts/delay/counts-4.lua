--[[
  Counts a type's tasks by state: ready and delayed split the waiting set at Redis's now (one ZCOUNT per
  chunk holding ready tasks, see waiting-set.lua: the first COUNT_STEP chunks here, the others by
  count-ready-1.lua, COUNT_STEP a call); running, dead and recently done are the sizes of their keys.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] dead  KEYS[4] done
  Tasks waiting their turn (of a priority, see priority.lua; in a group's queue, see groups.lua) are all ready; the waiting tasks of each priority
  are counted as they come and go (HASH <ws>:pc, at most 1,000 fields).
  Returns: { now, waiting, ready so far, running, dead, done, rank to go on from (-1: all counted), then
             pairs of priority, waiting tasks of it (priorities > 0 only) }
]]
--- @include "includes/now-ms"
--- @include "includes/priority"

local COUNT_STEP = 256
local now = nowMs()
local turns = tonumber(redis.call('GET', turnsOf(KEYS[1]) .. ':n') or '0') + tonumber(redis.call('GET', KEYS[1] .. ':gn') or '0')
local total = tonumber(redis.call('GET', KEYS[1] .. ':n') or '0') + turns
local ready, nextRank = wsCountReady(KEYS[1], now, 0, COUNT_STEP)
local out = { now, total, ready + turns, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('LLEN', KEYS[4]), nextRank }
for _, v in ipairs(redis.call('HGETALL', KEYS[1] .. ':pc')) do out[#out + 1] = v end
return out
