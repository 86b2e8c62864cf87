--[[
  Records that a node completed ('c', with its result) or died ('x', with its error), before its task's ack
  (or after its burial). Idempotent: a repeat changes nothing and returns the same dependents, so that a
  worker that crashed while telling them can be repeated. A completion wins over a death (a re-drive) and
  over a cancel; a death does not change a completed or cancelled node.
  KEYS: see flow-record.lua
  ARGV[1] ref  ARGV[2] 'c' or 'x'  ARGV[3] result or error JSON ('' none)  ARGV[4] now  ARGV[5] retention (ms)
  Returns: { changed (1/0; -1: no such node), the flow's end state now or '', the node's policy,
             cascade delta (0, 1, -1; 2: 1 walking every blocked node, a repeat), { refs to cascade next },
             its dependents to tell (lines ref\ttype, see flow-record.lua), { resume pairs: ref, byte (see block-7.lua) } }
]]
--- @include "includes/flow-record"

local ref, outcome = ARGV[1], ARGV[2]
local raw = redis.call('HGET', KEYS[2], ref)
if not raw then return { -1, '', '', 0, {}, '', {} } end
local def = cjson.decode(raw)
local prev = redis.call('HGET', KEYS[4], ref)
local changed, delta = 0, 0
if outcome == 'c' then
  if prev ~= 'c' then
    changed = 1
    redis.call('HSET', KEYS[4], ref, 'c')
    if ARGV[3] ~= '' then redis.call('HSET', KEYS[6], ref, ARGV[3]) end
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
  if prev == 'c' or prev == 'k' then return { 0, '', def.f, 0, {}, '', {} } end
  if not prev then
    changed = 1
    redis.call('HSET', KEYS[4], ref, 'x')
    if ARGV[3] ~= '' then redis.call('HSET', KEYS[7], ref, ARGV[3]) end
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
-- NOTE: a node may have 10,000 dependents: at most 200 here, the rest by the caller (block-7.lua).
local next, rest = {}, {}
if delta ~= 0 then flowCascadeFrom(ref, 1, delta, walk, 200, next, rest) end
local ended = ''
if changed == 1 then ended = flowEnd(tonumber(ARGV[4]), tonumber(ARGV[5])) end
local tell = ''
if outcome == 'c' or def.f == 'ignore' then tell = redis.call('HGET', KEYS[2], '\n' .. ref) or '' end
if walk then delta = 2 end
return { changed, ended, def.f, delta, next, tell, rest }
