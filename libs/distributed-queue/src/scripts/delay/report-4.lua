--[[
  Writes what running tasks reported since the worker's last call (see includes/task-logs.lua): their last
  progress and their new log lines, for the tasks whose reservation is still the caller's. An attempt that
  ended clears its progress (`final`). Logs a `progress` fleet event while the type's stream is followed.
  Then sweeps two random progress entries whose reservation is gone (a worker that died mid-attempt).
  KEYS[1] running  KEYS[2] jobs (the reports' keys derive from it)  KEYS[3] the type's event stream
  KEYS[4] its followed flag
  ARGV[1] event stream length (0: no events)  ARGV[2] log lines kept per task  ARGV[3] log bytes kept per task
  ARGV[4..] groups of 5: id, token, progress JSON ('' for none), log lines ('\n'-joined JSON arrays, '' for
            none), the first line's number in its run (its reservation); a token ending in '!' marks the attempt's last report
            (the attempt ended: clear its progress)
  Returns: the ids whose reservation is no longer the caller's (their reports were dropped)
]]
--- @include "includes/task-logs"
--- @include "includes/lease"
--- @include "includes/event-log"

local running, jobs = KEYS[1], KEYS[2]
local progressKey, logsKey = progressKeyOf(jobs), logsKeyOf(jobs)
local logLen, maxLines, maxBytes = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ids = {}
for i = 4, #ARGV, 5 do ids[#ids + 1] = ARGV[i] end
local refused = {}
if #ids == 0 then return refused end
local leases = redis.call('HMGET', running, unpack(ids))
local set, clear, evIds, evA, evP = {}, {}, {}, {}, {}
for n, id in ipairs(ids) do
  local b = 5 * n - 1
  local token, progress, lines = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
  local final = string.byte(token, #token) == 33
  if final then token = string.sub(token, 1, #token - 1) end
  if leases[n] == token then
    local attempt = parseLease(token)
    if progress ~= '' then
      if not final then set[#set + 1], set[#set + 2] = id, token .. '\n' .. progress end
      evIds[#evIds + 1], evA[#evA + 1], evP[#evP + 1] = id, attempt, progress
    end
    if lines ~= '' then appendLog(logsKey, id, lines, tonumber(ARGV[b + 4]), string.match(token, '^(%d+):'), maxLines, maxBytes) end
    if final then clear[#clear + 1] = id end
  else
    refused[#refused + 1] = id
    -- our attempt's entry may still be there (its reservation expired): drop it, not a newer attempt's
    local v = final and redis.call('HGET', progressKey, id)
    if v and string.sub(v, 1, #token + 1) == token .. '\n' then clear[#clear + 1] = id end
  end
end
if #set > 0 then redis.call('HSET', progressKey, unpack(set)) end
if #clear > 0 then redis.call('HDEL', progressKey, unpack(clear)) end
if #evIds > 0 and logLen > 0 and redis.call('EXISTS', KEYS[4]) == 1 then
  logEvent(KEYS[3], logLen, 'progress', { 'ids', cjson.encode(evIds), 'a', cjson.encode(evA), 'p', '[' .. table.concat(evP, ',') .. ']' })
end
-- the sweep: entries of reservations that are gone (bounded: two per call)
local sample = redis.call('HRANDFIELD', progressKey, 2)
if #sample > 0 then
  local values = redis.call('HMGET', progressKey, unpack(sample))
  local now = redis.call('HMGET', running, unpack(sample))
  for i, f in ipairs(sample) do
    local v = values[i]
    if v and (not now[i] or string.sub(v, 1, #now[i] + 1) ~= now[i] .. '\n') then redis.call('HDEL', progressKey, f) end
  end
end
return refused
