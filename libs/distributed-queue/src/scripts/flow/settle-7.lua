--[[
  Records that nodes of one flow completed ('c', with their results) or died ('x', with their errors), before
  their tasks' acks (or after their burial): the nodes a worker finished together, in one call. Idempotent:
  a repeat changes nothing and returns the same dependents, so that a worker that crashed while telling them
  can be repeated. A completion wins over a death (a re-drive) and over a cancel; a death does not change a
  completed or cancelled node.
  KEYS: see flow-record.lua
  ARGV[1] now  ARGV[2] retention (ms)  ARGV[3..] per node 3 values: ref, 'c' or 'x', result or error JSON ('' none)
  Returns: { the flow's end state now or '', then per node { changed (1/0; -1: no such node), cascade delta
             (0, 1, -1; 2: 1 walking every blocked node, a repeat), { refs to cascade next }, its dependents
             to tell (lines ref\ttype, see flow-record.lua, '' none), { resume pairs: ref, byte (see
             block-7.lua) } } }
]]
--- @include "includes/flow-record"

-- NOTE: a node may have 10,000 dependents: the call visits at most 200 in all, the rest by the caller (block-7.lua).
local budget = 200
local anyChange = false

local function settleOne(ref, outcome, json)
  local raw = redis.call('HGET', KEYS[2], ref)
  if not raw then return { -1, 0, {}, '', {} } end
  local def = cjson.decode(raw)
  local prev = redis.call('HGET', KEYS[4], ref)
  local changed, delta = 0, 0
  if outcome == 'c' then
    if prev ~= 'c' then
      changed = 1
      redis.call('HSET', KEYS[4], ref, 'c')
      if json ~= '' then redis.call('HSET', KEYS[6], ref, json) end
      redis.call('HDEL', KEYS[7], ref)
      redis.call('HINCRBY', KEYS[1], 'done', 1)
      if prev == 'x' then
        redis.call('HINCRBY', KEYS[1], 'dead', -1)
        if def.f == 'fail' then redis.call('HINCRBY', KEYS[1], 'deadFail', -1) end
        if def.f ~= 'ignore' then delta = -1 end
      elseif prev == 'k' then
        redis.call('HINCRBY', KEYS[1], 'cancelled', -1)
      elseif blockingOf(ref) > 0 then
        redis.call('HINCRBY', KEYS[1], 'blocked', -1)
      end
    end
  elseif outcome == 'x' then
    if prev == 'c' or prev == 'k' then return { 0, 0, {}, '', {} } end
    if not prev then
      changed = 1
      redis.call('HSET', KEYS[4], ref, 'x')
      if json ~= '' then redis.call('HSET', KEYS[7], ref, json) end
      redis.call('HINCRBY', KEYS[1], 'dead', 1)
      if def.f == 'fail' then redis.call('HINCRBY', KEYS[1], 'deadFail', 1) end
      if def.f ~= 'ignore' then delta = 1 end
      if blockingOf(ref) > 0 then redis.call('HINCRBY', KEYS[1], 'blocked', -1) end
    end
  end
  -- NOTE: a repeated death walks its blocked dependents again: the worker that recorded it may have died
  -- in the middle of the cascade (each edge counts once, see flowCascade).
  local walk = false
  if outcome == 'x' and changed == 0 and def.f ~= 'ignore' then delta, walk = 1, true end
  local next, rest = {}, {}
  if delta ~= 0 then
    if budget > 0 then
      budget = flowCascadeFrom(ref, 1, delta, walk, budget, next, rest)
    else
      rest[1], rest[2] = ref, 1
    end
  end
  local tell = ''
  if outcome == 'c' or def.f == 'ignore' then tell = redis.call('HGET', KEYS[2], '\n' .. ref) or '' end
  if changed == 1 then anyChange = true end
  if walk then delta = 2 end
  return { changed, delta, next, tell, rest }
end

local out = { '' }
for i = 3, #ARGV, 3 do out[#out + 1] = settleOne(ARGV[i], ARGV[i + 1], ARGV[i + 2]) end
if anyChange then out[1] = flowEnd(tonumber(ARGV[1]), tonumber(ARGV[2])) end
return out
