-- A flow's record (issue 30), all in one slot (hash tag {<prefix>:flow:<id>}), every flow script's KEYS:
--   KEYS[1] HASH meta  state ('creating' | 'running' | 'completed' | 'failed' | 'cancelled'), id, total,
--                      created, ended (ms), counters done, dead, deadFail (dead under the policy 'fail'),
--                      cancelled, blocked (nodes that cannot run: a dependency died, not 'ignore'), cancel
--                      ('1' once cancelFlow ran)
--   KEYS[2] HASH defs  ref -> JSON { t type, pt the type it is parked in or submitted to, f policy, and k key,
--                      dl delay, p priority, g group when given }; '\n<ref>' its dependents, '\r<ref>' its
--                      dependencies (see linesFrom)
--   KEYS[3] HASH pl    unused since 2026-11-28 (held the nodes' payloads, which their tasks hold; expires with the rest)
--   KEYS[4] HASH st    ref -> 'c' completed, 'x' dead, 'k' cancelled (no field: not settled)
--   KEYS[5] HASH bk    '#<ref>' -> how many of its dependencies are dead (not 'ignore') or blocked, and
--                      '<ref>\n<dependency>' -> 1 for each of them (see flowCascade)
--   KEYS[6] HASH res   ref -> its handler's result (JSON)
--   KEYS[7] HASH err   ref -> the error it died with (JSON)
-- A flow that ended expires after the retention (ARGV); a re-drive that runs it again keeps it (PERSIST).

local function flowExpire(ms)
  for i = 1, 7 do
    if ms > 0 then redis.call('PEXPIRE', KEYS[i], ms) else redis.call('PERSIST', KEYS[i]) end
  end
end

-- After a change: the flow ends when every node is settled or blocked; it may run again (a re-drive).
-- Returns its end state when it ended now, else ''.
local function flowEnd(now, retention)
  local m = redis.call('HMGET', KEYS[1], 'state', 'total', 'done', 'dead', 'deadFail', 'cancelled', 'blocked', 'cancel')
  local state = m[1]
  if not state or state == 'creating' then return '' end
  local settled = 0
  for i = 3, 7 do
    if i ~= 5 then settled = settled + (tonumber(m[i]) or 0) end
  end
  if settled < tonumber(m[2]) then
    if state ~= 'running' then
      redis.call('HSET', KEYS[1], 'state', 'running')
      redis.call('HDEL', KEYS[1], 'ended')
      flowExpire(0)
    end
    return ''
  end
  local final = 'completed'
  if m[8] == '1' then
    final = 'cancelled'
  elseif (tonumber(m[5]) or 0) > 0 then
    final = 'failed'
  end
  if state == final then return '' end
  redis.call('HSET', KEYS[1], 'state', final, 'ended', string.format('%.0f', now))
  flowExpire(retention)
  return final
end

-- A dependency `from` of each of `refs` became blocking (delta 1: it died, not under 'ignore', or it is
-- blocked) or no longer is (-1). Per edge, idempotent: bk holds the edge '<ref>\n<from>' and the count
-- '#<ref>'. Returns the refs to carry the cascade to (their own dependents, next): those whose blocking
-- flipped, and with `walk` (a repeat: a worker may have died in the middle of it) every blocked one.
local function flowCascade(from, refs, delta, walk)
  local out, blocked = {}, 0
  for _, r in ipairs(refs) do
    local changed
    if delta > 0 then changed = redis.call('HSETNX', KEYS[5], r .. '\n' .. from, 1) else changed = redis.call('HDEL', KEYS[5], r .. '\n' .. from) end
    local k
    if changed == 1 then
      k = redis.call('HINCRBY', KEYS[5], '#' .. r, delta)
      if k <= 0 then redis.call('HDEL', KEYS[5], '#' .. r) end
    else
      k = tonumber(redis.call('HGET', KEYS[5], '#' .. r) or '0')
    end
    if redis.call('HEXISTS', KEYS[4], r) == 0 then
      local flipped = changed == 1 and ((delta > 0 and k == 1) or (delta < 0 and k <= 0))
      if flipped then blocked = blocked + delta end
      if flipped or (walk and delta > 0 and k > 0) then out[#out + 1] = r end
    end
  end
  if blocked ~= 0 then redis.call('HINCRBY', KEYS[1], 'blocked', blocked) end
  return out
end

-- How many of ref's dependencies block it (see flowCascade).
local function blockingOf(ref)
  return tonumber(redis.call('HGET', KEYS[5], '#' .. ref) or '0')
end

-- A node's dependents are kept apart from its def, in defs field '\n<ref>' as lines '<ref>\t<type>\n', and its
-- dependencies in '\r<ref>' as lines '<ref>\n' (refs and types hold no control characters), so that a node
-- of 10,000 edges is read a slice at a time, never decoded whole.

-- The lines of text `s` from byte `pos`, at most `count`: the part before the first tab of each (or the whole
-- line), and the byte to resume at (nil: none left).
local function linesFrom(s, pos, count)
  local out = {}
  if not s then return out, nil end
  while #out < count and pos <= #s do
    local e = string.find(s, '\n', pos, true)
    local tab = string.find(s, '\t', pos, true)
    if tab == nil or tab > e then tab = e end
    out[#out + 1] = string.sub(s, pos, tab - 1)
    pos = e + 1
  end
  if pos <= #s then return out, pos end
  return out, nil
end

-- Whether a defs field holds a node (not the edges of one).
local function isNodeField(field)
  local b = string.byte(field, 1)
  return b ~= 10 and b ~= 13
end

-- Carries a cascade from `ref` over its dependents from byte `from` of their list, at most `budget` of them;
-- appends the refs to carry it on to `next`, and a resume pair (ref, byte) to `rest` when the budget ran
-- out. Returns the budget left.
local function flowCascadeFrom(ref, from, delta, walk, budget, next, rest)
  local refs, resume = linesFrom(redis.call('HGET', KEYS[2], '\n' .. ref), from, budget)
  for _, r in ipairs(flowCascade(ref, refs, delta, walk)) do next[#next + 1] = r end
  if resume then rest[#rest + 1], rest[#rest + 2] = ref, resume end
  return budget - #refs
end
