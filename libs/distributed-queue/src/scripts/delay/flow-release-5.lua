--[[
  Tells parked flow nodes (see flow-park.lua) that a dependency completed, or died under the policy
  'ignore': the node that loses its last dependency enters its queue, due its delay from now, as a submit
  would add it (priority, group). Repeated or late news changes nothing (the field is gone), so a node
  enters its queue at most once.
  KEYS[1] waiting  KEYS[2] jobs  KEYS[3] the type's limits  KEYS[4] event stream  KEYS[5] its recorded flag
  ARGV[1] events channel  ARGV[2] event stream length (0: none)
  ARGV[3..] triples: node id, the dependency's ref, '1' when it left a result or an error for the node to
  read, else '0' (a node released with nothing to read is released without its '&': no read, see flow-park.lua)
  Returns: the ids of the nodes released now
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/event-log"
--- @include "includes/record"
--- @include "includes/enqueue"
--- @include "includes/flow-park"

local ws, jobs = KEYS[1], KEYS[2]
local now = nowMs()
local before = headScore(ws)
local released = {}
local q = enqueueBatch(ws, KEYS[3], false)
local ids, dues, delays, bodies = {}, {}, {}, {}
local logged = tonumber(ARGV[2]) > 0 and redis.call('EXISTS', KEYS[5]) == 1
for i = 3, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('HDEL', parkedDepsKey(ws), id .. '\n' .. ARGV[i + 1]) == 1 then
    local left, delay, g, none = parkedOf(ws, id)
    none = none and ARGV[i + 2] == '0'
    local tag = ''
    if none then tag = 'n' end
    if left ~= nil and left > 1 then
      redis.call('HSET', parkedKey(ws), id, tag .. (left - 1) .. ':' .. delay .. ':' .. g)
    elseif left ~= nil then
      redis.call('HDEL', parkedKey(ws), id)
      local r = parseRecord(redis.call('HGET', jobs, id), 0)
      if r then
        local due = now + delay
        local member = memberOf(r.seq, id)
        local bare = none and string.byte(r.payload, 1) == 38 -- '&': its worker would read its dependencies
        if bare then r.payload = string.sub(r.payload, 2) end
        if r.priority > 0 then
          r.due = due
          redis.call('HSET', jobs, id, encodeRecord(r))
          priorityCount(ws, r.priority, 1)
        elseif bare then
          redis.call('HSET', jobs, id, seqTag(r.seq) .. r.payload)
        end
        if g ~= '' then
          redis.call('HSET', ws .. ':gof', id, g)
          groupBacklog(ws, g, 1)
        end
        enqueue(q, due, now, g, r.priority, member, r.seq)
        released[#released + 1] = id
        if logged then
          local body = r.payload
          if string.byte(body, 1) == 38 then body = string.sub(body, 2) end -- '&': a node with dependencies (flow-plan.ts)
          ids[#ids + 1], dues[#dues + 1], delays[#delays + 1], bodies[#bodies + 1] = id, due, delay, body
        end
      end
    end
  end
end
enqueueFlush(q, ARGV[1], before, now)
if #ids > 0 then
  logEvent(KEYS[4], tonumber(ARGV[2]), 'submitted',
    { 'ids', cjson.encode(ids), 'due', cjson.encode(dues), 'd', cjson.encode(delays), 'b', cjson.encode(bodies) })
end
return released
